#include "sim/hardware/memory_planner.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace servesim {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// CUDA context, NCCL buffers, CUDA graphs and allocator slack not seen by vLLM's profiler
// (vLLM reports ~0.5–1.5 GiB of non-torch memory on H100); midpoint.
constexpr double kFixedOverheadBytes = 1.0 * kGiB;

// One GPU's share of a linear-attention layer's state per request: its value heads sharded over
// the `attention_tp` GPUs of its group, held in the KV cache's element size.
double linear_state_bytes(const ModelSpec& m, const ReplicaSpec& r, double attention_tp) {
  return m.linear_state_elems() / attention_tp * r.kv_dtype_bytes;
}

// The layers among `count` from `first` whose cache does not grow with the context, and what
// they hold per seat on one GPU: a sliding-window layer at most the window and the block being
// filled (vLLM's hybrid KV cache manager frees its blocks beyond the window), a linear-attention
// layer its recurrent state (`linear_state_bytes`, the GPU's share). They are reserved per seat
// (max_num_seqs) and the blocks count the full-attention layers alone.
struct SeatKv {
  int layers = 0;
  double seat_bytes = 0;
};
SeatKv seat_kv(const ModelSpec& m, int first, int count, double kv_per_layer_token,
               std::int32_t block_size, double linear_state_bytes) {
  SeatKv k;
  for (int i = first; i < first + count; ++i) {
    if (m.is_linear_layer(i)) {
      ++k.layers;
      k.seat_bytes += linear_state_bytes;
    } else if (m.is_sliding_layer(i)) {
      ++k.layers;
      k.seat_bytes += kv_per_layer_token * (m.sliding_window + block_size);
    }
  }
  // A stage without a full-attention layer has none to count blocks by: its blocks hold every
  // layer's tokens, as a cache without windows or states would.
  if (k.layers == count) k = SeatKv{};
  return k;
}
}  // namespace

std::vector<int> pp_stage_layers(int layers, int pp) {
  std::vector<int> out(static_cast<std::size_t>(std::max(pp, 1)), layers / std::max(pp, 1));
  const int left = layers % std::max(pp, 1);
  for (int i = 2; i < left + 2; ++i) ++out[out.size() - static_cast<std::size_t>(i)];
  return out;
}

namespace {

// What one GPU of a replica holds beside its KV cache, for the stage loop both layouts share.
// Weights: a stage's `tables` (the embedding and LM head it holds, one `table` each) and its
// layers' `layer_bytes`, summed and divided by `divisor` (tp where the sums are the replica's, 1
// where they are one GPU's already). Each of `groups` attention groups keeps its own cache, its
// seats max_num_seqs / groups.
struct GpuShare {
  std::function<double(int)> layer_bytes;
  double table = 0;
  double tables = 0;
  double divisor = 1;
  double activation = 0;  // beside the logits
  double logits = 0;      // the sampler's, on the last stage
  double kv_per_layer_token = 0;
  double linear_state = 0;  // one GPU's state bytes per request per linear-attention layer
  int groups = 1;
};

MemoryPlan plan_stages(const ReplicaSpec& replica, const GpuShare& g, double utilization,
                       std::int32_t block_size, std::int32_t max_num_seqs) {
  const ModelSpec& m = *replica.model;
  const std::vector<int> stages = pp_stage_layers(m.num_layers, replica.pp);
  MemoryPlan plan;
  int first_layer = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const bool first = s == 0;
    const bool last = s + 1 == stages.size();
    MemoryPlan p;
    p.gpu_bytes = replica.gpu->device_memory_bytes();
    p.stage = static_cast<int>(s);
    double stage_bytes = first && last ? g.tables : (first || last ? g.table : 0.0);
    for (int i = first_layer; i < first_layer + stages[s]; ++i) stage_bytes += g.layer_bytes(i);
    p.weight_bytes = stage_bytes / g.divisor;
    p.activation_bytes = g.activation + (last ? g.logits : 0.0) + kFixedOverheadBytes;
    const SeatKv seats =
        seat_kv(m, first_layer, stages[s], g.kv_per_layer_token, block_size, g.linear_state);
    first_layer += stages[s];
    p.block_bytes = (stages[s] - seats.layers) * g.kv_per_layer_token * block_size;
    const double available = utilization * p.gpu_bytes - p.weight_bytes - p.activation_bytes -
                             seats.seat_bytes * max_num_seqs / g.groups;
    p.num_blocks = static_cast<std::int64_t>(std::floor(available / p.block_bytes));
    if (p.num_blocks > 0) p.num_blocks *= g.groups;
    if (s == 0 || p.num_blocks < plan.num_blocks) plan = p;
  }
  return plan;
}

// An MoE replica laid out by expert or attention data parallelism: each GPU holds its attention
// group's share (tp / attention_dp) of the attention, dense and shared-expert weights and of the
// embedding and LM head, 1 / tp of the routed experts (experts / ep, each sharded tp / ep ways),
// and the router whole; each group keeps its own KV cache for its own requests, its KV heads
// split over its GPUs (an MLA latent whole on each). The replica's blocks are the groups' sum.
MemoryPlan plan_moe_parallel(const ReplicaSpec& replica, double utilization,
                             std::int32_t block_size, std::int32_t max_num_batched_tokens,
                             std::int32_t max_num_seqs) {
  const ModelSpec& m = *replica.model;
  const double tp = replica.tp;
  const double a = replica.attention_tp();
  const double d = replica.attention_dp;
  const double wb = replica.weight_bytes_per_param();
  const double quantized_bf16 = wb < 2 ? 2.0 : wb;  // what checkpoints leave in bf16
  const double h = m.hidden_size;
  const double matrices = m.gated_mlp ? 3.0 : 2.0;
  const double attn_bytes = m.fp8_skips_attention ? quantized_bf16 : wb;
  const double attn = m.attention_params_per_layer() * attn_bytes / a;
  const double linear_attn = m.linear_attention_params() * attn_bytes / a;
  const double moe_layer = attn + m.num_experts * matrices * h * m.intermediate_size * wb / tp +
                           h * m.num_experts * quantized_bf16 +
                           matrices * h * m.shared_expert_intermediate * wb / a;
  const double dense_layer = attn + matrices * h * m.dense_mlp_width() * wb / a;
  GpuShare g;
  g.layer_bytes = [&](int i) {
    return (m.is_moe_layer(i) ? moe_layer : dense_layer) +
           (m.is_linear_layer(i) ? linear_attn - attn : 0.0);
  };
  g.table = static_cast<double>(m.vocab_size) * h * 2 / a;
  g.tables = g.table * (m.tie_word_embeddings ? 1 : 2);
  g.kv_per_layer_token = m.kv_lora_rank > 0 ? m.kv_bytes_per_token_per_layer(replica.kv_dtype_bytes)
                                            : 2.0 * std::ceil(m.num_kv_heads / a) * m.head_dim *
                                                  replica.kv_dtype_bytes;
  // Activations: a group's share of the step's tokens through attention, every token of the
  // step through the experts of a rank (its share of the routed rows).
  const double tokens = max_num_batched_tokens;
  const double expert_rows = tokens * std::min(m.num_experts, m.experts_per_token) / replica.moe_ep;
  g.activation = 2.0 * (tokens / d * 6.0 * h +
                        expert_rows * matrices * m.intermediate_size / replica.moe_tp());
  g.logits = static_cast<double>(max_num_seqs) / d * m.vocab_size * 4.0;
  g.linear_state = linear_state_bytes(m, replica, a);
  g.groups = replica.attention_dp;
  return plan_stages(replica, g, utilization, block_size, max_num_seqs);
}

}  // namespace

MemoryPlan plan_kv_memory(const ReplicaSpec& replica, double gpu_memory_utilization,
                          std::int32_t block_size, std::int32_t max_num_batched_tokens,
                          std::int32_t max_num_seqs) {
  if (replica.moe_parallel() && replica.model->is_moe()) {
    return plan_moe_parallel(replica, gpu_memory_utilization, block_size, max_num_batched_tokens,
                             max_num_seqs);
  }
  const ModelSpec& m = *replica.model;
  const double tp = replica.tp;
  // One vocab × hidden table: the embedding, or the LM head. One stage holding both keeps a
  // tied pair once; split over stages, the last holds its own copy (vLLM's ParallelLMHead).
  const double table = static_cast<double>(m.vocab_size) * m.hidden_size;
  const double tables = table * (m.tie_word_embeddings ? 1 : 2);
  // FP8 checkpoints leave embeddings, LM head and routers in bf16 (as the cost models price them).
  const double wb = replica.weight_bytes_per_param();
  GpuShare g;
  g.layer_bytes = [&m, wb](int i) {
    const bool moe = m.is_moe_layer(i);
    const double bf16 = wb < 2 ? m.layer_unquantized_params(moe) : 0.0;
    const double bytes = (m.layer_params(moe) - bf16) * wb + bf16 * 2;
    if (!m.is_linear_layer(i)) return bytes;
    // A linear-attention layer in place of the full attention layer_params counts.
    const double linear = m.linear_attention_params() - m.attention_params_per_layer();
    return bytes + linear * (wb < 2 && m.fp8_skips_attention ? 2.0 : wb);
  };
  g.table = table * 2;
  g.tables = tables * 2;
  g.divisor = tp;
  const double act_dtype = 2.0;
  const double tokens = max_num_batched_tokens;
  // The widest MLP a token passes: a dense layer's, or top-k experts' (fused MoE keeps one
  // intermediate row per routed expert).
  const double widest = std::max<double>(
      m.dense_mlp_width(), m.is_moe() ? static_cast<double>(m.intermediate_size) *
                                            std::min(m.num_experts, m.experts_per_token)
                                      : 0.0);
  const double mlp_width = (m.gated_mlp ? 3.0 : 2.0) * widest / tp;
  const double per_token = (mlp_width + 6.0 * m.hidden_size) * act_dtype;
  g.activation = tokens * per_token;
  // Full-vocabulary logits on a TP rank: vLLM gathers them to rank 0 (V0) or all-gathers them to
  // every rank (V1), so the rank that bounds the cache holds them whole.
  g.logits = static_cast<double>(max_num_seqs) * m.vocab_size * 4.0;
  // KV heads are split across TP ranks, but never below one head per rank (replicated).
  g.kv_per_layer_token = m.kv_lora_rank > 0 ? m.kv_bytes_per_token_per_layer(replica.kv_dtype_bytes)
                                            : 2.0 * std::ceil(m.num_kv_heads / tp) * m.head_dim *
                                                  replica.kv_dtype_bytes;
  g.linear_state = linear_state_bytes(m, replica, tp);
  return plan_stages(replica, g, gpu_memory_utilization, block_size, max_num_seqs);
}

}  // namespace servesim
