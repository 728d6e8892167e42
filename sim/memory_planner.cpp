#include "sim/memory_planner.hpp"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// CUDA context, NCCL buffers, CUDA graphs and allocator slack not seen by vLLM's profiler
// (vLLM reports ~0.5–1.5 GiB of non-torch memory on H100); midpoint.
constexpr double kFixedOverheadBytes = 1.0 * kGiB;
}  // namespace

MemoryPlan plan_kv_memory(const ReplicaSpec& replica, double gpu_memory_utilization,
                          std::int32_t block_size, std::int32_t max_num_batched_tokens,
                          std::int32_t max_num_seqs) {
  const ModelSpec& m = *replica.model;
  const double tp = replica.tp;
  const double gpus = tp * replica.pp;
  MemoryPlan plan;
  plan.gpu_bytes = replica.gpu->device_memory_bytes();
  // FP8 checkpoints leave embeddings, LM head and routers in bf16 (as the cost models price them).
  const double bf16_params = replica.weight_bytes_per_param() < 2 ? m.unquantized_params() : 0.0;
  plan.weight_bytes =
      ((m.num_params() - bf16_params) * replica.weight_bytes_per_param() + bf16_params * 2) / gpus;
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
  const double logits = static_cast<double>(max_num_seqs) * m.vocab_size / tp * 4.0;
  plan.activation_bytes = tokens * per_token + logits + kFixedOverheadBytes;
  // KV heads are split across TP ranks, but never below one head per rank (replicated).
  const double kv_per_layer_token =
      m.kv_lora_rank > 0
          ? m.kv_bytes_per_token_per_layer(replica.kv_dtype_bytes)
          : 2.0 * std::ceil(m.num_kv_heads / tp) * m.head_dim * replica.kv_dtype_bytes;
  const double layers = std::ceil(static_cast<double>(m.num_layers) / replica.pp);
  plan.block_bytes = layers * kv_per_layer_token * block_size;
  const double available =
      gpu_memory_utilization * plan.gpu_bytes - plan.weight_bytes - plan.activation_bytes;
  plan.num_blocks = static_cast<std::int64_t>(std::floor(available / plan.block_bytes));
  return plan;
}

}  // namespace servesim
