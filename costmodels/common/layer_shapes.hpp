#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// The four projection GEMMs of one transformer layer, in execution order.
enum class ProjOp : std::size_t { kQkv, kO, kGateUp, kDown, kCount };
inline constexpr std::size_t kNumProjOps = static_cast<std::size_t>(ProjOp::kCount);

// One GEMM C[M×N] = A[M×K] · B[K×N] (B = weights), repeated `count` times with the same shape
// (MoE experts). M is the token count routed to one instance.
struct GemmShape {
  double m = 0;
  double k = 0;
  double n = 0;
  double count = 1;
  double flops() const { return 2 * m * k * n * count; }
  // DRAM bytes of one pass: bf16 activations in and out, weights of `weight_bytes` per element.
  double bytes(double weight_bytes) const {
    return ((m * k + m * n) * 2 + k * n * weight_bytes) * count;
  }
};

// Per-GPU shapes of one layer under tensor parallelism `tp`, following Megatron sharding:
// QKV and gate/up are column-parallel (N / tp), O and down are row-parallel (K / tp).
// Invariant: every dimension is ≥ 1 for tokens ≥ 1 (sharded widths are rounded up).
// An MoE layer laid out with `attention_dp` groups and `ep` expert ranks (ReplicaSpec) shards
// attention, dense and shared-expert MLPs, and the LM head by tp / attention_dp (each group
// runs them on its own tokens), and each routed expert's width by tp / ep over experts / ep
// experts per rank.
struct LayerShapes {
  int tp = 1;
  int ep = 1;
  double hidden = 0;
  double head_dim = 0;
  double q_heads = 0;   // per GPU
  double kv_heads = 0;  // per GPU (replicated when n_kv < tp)
  double qkv_width = 0;
  double attn_width = 0;  // q_heads · head_dim
  // KV-cache elements per token per GPU: 2·kv_heads·head_dim, or with MLA the latent
  // kv_lora_rank + qk_rope_head_dim (one latent per token, replicated on every TP rank).
  double kv_width = 0;
  double mla_latent = 0;  // kv_lora_rank (0 without MLA)
  double mla_rope = 0;    // qk_rope_head_dim
  double mla_q_lora = 0;  // q_lora_rank
  // Sliding-window attention: the window (tokens) and the share of layers with it (0: none).
  double window = 0;
  double window_share = 0;
  // Hybrid linear attention: the share of linear-attention layers (0: none), their input
  // projection's width per GPU (q, k, v, z and the beta/alpha gates), output projection's input
  // width, and recurrent state per request (elements per GPU: this GPU's value heads' key dim ×
  // value dim), with their value heads and head dims.
  double linear_share = 0;
  double linear_in_width = 0;
  double linear_out_width = 0;
  double linear_state = 0;
  double linear_value_heads = 0;
  double linear_key_dim = 0;
  double linear_value_dim = 0;
  double inter = 0;     // per GPU, per expert
  double up_width = 0;  // 2·inter when gated
  double experts = 0;   // 0 for dense; all of them (each rank holds experts / ep)
  double top_k = 0;
  // Interleaved MoE (Llama-4 Maverick): the share of layers with routed experts (1 when every
  // layer has them, 0 for a dense model) and the per-GPU MLP width of the other, dense layers.
  double moe_fraction = 0;
  double dense_inter = 0;
  double shared_inter = 0;  // per GPU
  double vocab = 0;         // per GPU (vocab-parallel embedding / LM head)

  static LayerShapes make(const ModelSpec& model, int tp, int attention_dp = 1, int ep = 1);
  // Projection GEMM `op` for `tokens` tokens in the step (dense layer).
  GemmShape gemm(ProjOp op, double tokens) const;
  // MLA's QKV GEMMs (vLLM's DeepseekV2MLAAttention): the joint down-projection of the query (when
  // low-rank) and the KV latent with its RoPE part, replicated on every GPU of a group; the
  // query's up-projection to this GPU's heads; and the KV up-projection to their nope keys and
  // values. Decode runs the last one absorbed into the query and output (the same FLOPs per
  // token: 2 · heads · kv_lora_rank · 2 · head_dim); prefill on the chunk's latents.
  std::array<GemmShape, 3> mla_qkv_gemms(double tokens) const;
  // A linear-attention layer's input (op kQkv) or output (kO) projection.
  GemmShape linear_gemm(ProjOp op, double tokens) const;
  // MoE: the GEMMs of one expert rank when `tokens` tokens (all the ranks' together) are routed,
  // as the tokens routed to each of its active experts and the number of active experts.
  GemmShape expert_gemm(ProjOp op, double tokens) const;
  // Rows (token, expert) one expert rank computes for `tokens` routed tokens.
  double expert_rows(double tokens) const { return tokens * std::min(experts, top_k) / ep; }
  // The gate/up or down GEMM of a dense layer of an interleaved MoE model (width dense_inter).
  GemmShape dense_mlp_gemm(ProjOp op, double tokens) const;
  // Whether some layers are MoE and others dense.
  bool interleaved() const { return experts > 0 && moe_fraction < 1; }
  // The mean layer's cost of a part priced `moe` in an MoE layer and `dense` in a dense one.
  double mean_layer(double moe, double dense) const {
    return moe_fraction * moe + (1 - moe_fraction) * dense;
  }
};

}  // namespace servesim
