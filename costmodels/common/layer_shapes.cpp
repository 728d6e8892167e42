#include "costmodels/common/layer_shapes.hpp"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {
double shard(double width, int tp) { return std::max(1.0, std::ceil(width / tp)); }
}  // namespace

LayerShapes LayerShapes::make(const ModelSpec& model, int gpus, int attention_dp, int ep) {
  LayerShapes s;
  const int tp = gpus / attention_dp;  // attention, dense and shared MLPs, LM head
  s.tp = tp;
  s.ep = ep;
  s.hidden = model.hidden_size;
  s.head_dim = model.head_dim > 0 ? model.head_dim
                                  : static_cast<double>(model.hidden_size) / model.num_heads;
  s.q_heads = shard(model.num_heads, tp);
  s.kv_heads = shard(model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads, tp);
  // A gated output doubles the query projection (query and gate).
  s.qkv_width = ((model.attention_output_gate ? 2 : 1) * s.q_heads + 2 * s.kv_heads) * s.head_dim;
  s.attn_width = s.q_heads * s.head_dim;
  s.mla_latent = model.kv_lora_rank;
  s.mla_rope = model.qk_rope_head_dim;
  s.mla_q_lora = model.q_lora_rank;
  if (model.full_attention_interval > 0) {
    s.linear_share = static_cast<double>(model.linear_layers()) / model.num_layers;
    const double kh = shard(model.linear_key_heads, tp);
    const double vh = shard(model.linear_value_heads, tp);
    s.linear_value_heads = vh;
    s.linear_key_dim = model.linear_key_head_dim;
    s.linear_value_dim = model.linear_value_head_dim;
    s.linear_in_width = 2 * kh * s.linear_key_dim + 2 * vh * s.linear_value_dim + 2 * vh;
    s.linear_out_width = vh * s.linear_value_dim;
    s.linear_state = model.linear_state_elems() / tp;
  }
  if (model.sliding_window > 0) {
    s.window = model.sliding_window;
    s.window_share = static_cast<double>(model.sliding_layers()) / model.num_layers;
  }
  s.kv_width = model.kv_lora_rank > 0 ? model.kv_lora_rank + model.qk_rope_head_dim
                                      : 2 * s.kv_heads * s.head_dim;
  // A routed expert's width is sharded over the GPUs of its expert rank; with no expert
  // parallelism and no attention groups that is every GPU (tp).
  s.inter = model.is_moe() ? shard(model.intermediate_size, gpus / ep)
                           : shard(model.intermediate_size, tp);
  s.up_width = model.gated_mlp ? 2 * s.inter : s.inter;
  s.experts = model.num_experts;
  s.top_k = model.experts_per_token;
  s.moe_fraction =
      model.is_moe() ? static_cast<double>(model.moe_layers()) / model.num_layers : 0.0;
  s.dense_inter = shard(model.dense_mlp_width(), tp);
  s.shared_inter =
      model.shared_expert_intermediate > 0 ? shard(model.shared_expert_intermediate, tp) : 0.0;
  s.vocab = shard(model.vocab_size, tp);
  return s;
}

GemmShape LayerShapes::gemm(ProjOp op, double tokens) const {
  switch (op) {
    case ProjOp::kQkv:
      return {tokens, hidden, qkv_width, 1};
    case ProjOp::kO:
      return {tokens, attn_width, hidden, 1};
    case ProjOp::kGateUp:
      return {tokens, hidden, up_width, 1};
    case ProjOp::kDown:
    case ProjOp::kCount:
      break;
  }
  return {tokens, inter, hidden, 1};
}

std::array<GemmShape, 3> LayerShapes::mla_qkv_gemms(double tokens) const {
  const double qk = head_dim + mla_rope;
  const double down = mla_q_lora + mla_latent + mla_rope;
  return {GemmShape{tokens, hidden, down, 1},
          GemmShape{tokens, mla_q_lora > 0 ? mla_q_lora : hidden, q_heads * qk, 1},
          GemmShape{tokens, mla_latent, q_heads * 2 * head_dim, 1}};
}

GemmShape LayerShapes::linear_gemm(ProjOp op, double tokens) const {
  if (op == ProjOp::kO) return {tokens, linear_out_width, hidden, 1};
  return {tokens, hidden, linear_in_width, 1};
}

GemmShape LayerShapes::dense_mlp_gemm(ProjOp op, double tokens) const {
  const double gated_up = up_width / inter;  // 2 for a gated MLP, 1 otherwise
  if (op == ProjOp::kGateUp) return {tokens, hidden, gated_up * dense_inter, 1};
  if (op == ProjOp::kDown) return {tokens, dense_inter, hidden, 1};
  return gemm(op, tokens);
}

GemmShape LayerShapes::expert_gemm(ProjOp op, double tokens) const {
  GemmShape g = gemm(op, tokens);
  if (experts <= 0 || op == ProjOp::kQkv || op == ProjOp::kO) return g;
  // Top-k routing spreads tokens·k assignments over the experts, a rank's share over its
  // experts / ep; with few tokens only that many experts are active (uniform routing
  // assumption).
  const double assignments = tokens * top_k / ep;
  const double active = std::min(experts / ep, std::max(1.0, assignments));
  g.count = active;
  g.m = std::max(1.0, std::ceil(assignments / active));
  return g;
}

}  // namespace servesim
