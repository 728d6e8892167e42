#include "costmodels/roofline/roofline_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "costmodels/common/attention_work.hpp"
#include "costmodels/common/layer_shapes.hpp"

namespace servesim {
namespace {

struct Peaks {
  double flops_per_ns;
  double bytes_per_ns;
  double link_bytes_per_ns;
};

double roof(double flops, double bytes, const Peaks& pk) {
  return std::max(flops / pk.flops_per_ns, bytes / pk.bytes_per_ns);
}

double gemm_ns(const GemmShape& g, double weight_bytes, const Peaks& pk) {
  return roof(g.flops(), g.bytes(weight_bytes), pk);
}

}  // namespace

RooflineCostModel::Params RooflineCostModel::parse(const ConfigNode& node) {
  node.check_keys({"kind", "host_floor_ns", "collectives"});
  Params p;
  p.host_floor_ns = node.get_nonnegative("host_floor_ns", p.host_floor_ns);
  p.collectives = node.get_bool("collectives", p.collectives);
  return p;
}

StepCost RooflineCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost cost;
  if (batch.empty()) return cost;
  const GpuSpec& gpu = *replica.gpu;
  const ModelSpec& model = *replica.model;
  // The TP ring runs at its slowest hop: NVLink only when every hop is (one direction).
  const double link_gb_per_s = replica.tp > 1 && gpu.ring_on_nvlink(replica.tp, replica.links())
                                   ? gpu.nvlink_gb_per_s / 2
                                   : gpu.pcie_gb_per_s;
  const Peaks pk{gpu.gemm_flop_per_ns(replica.weights), gpu.memory_bw_gb_per_s,
                 std::max(link_gb_per_s, 1.0)};
  const double wbytes = replica.weight_bytes_per_param();
  const LayerShapes s = LayerShapes::make(model, replica.tp);
  const double tokens = static_cast<double>(batch.total_tokens());

  double gemm = 0;
  double mlp = 0;  // the MoE layers' MLP (every layer's for a model that is not interleaved)
  // bf16 weights at the bf16 peak: a checkpoint that keeps attention (and always the LM head)
  // unquantized.
  const Peaks bf16{gpu.bf16_flop_per_ns(), pk.bytes_per_ns, pk.link_bytes_per_ns};
  for (std::size_t i = 0; i < kNumProjOps; ++i) {
    const auto op = static_cast<ProjOp>(i);
    const bool mlp_op = op == ProjOp::kGateUp || op == ProjOp::kDown;
    (mlp_op ? mlp : gemm) += !mlp_op && model.fp8_skips_attention
                                 ? gemm_ns(s.expert_gemm(op, tokens), 2, bf16)
                                 : gemm_ns(s.expert_gemm(op, tokens), wbytes, pk);
  }
  if (s.shared_inter > 0) {
    const double up = model.gated_mlp ? 2 * s.shared_inter : s.shared_inter;
    mlp += gemm_ns({tokens, s.hidden, up, 1}, wbytes, pk);
    mlp += gemm_ns({tokens, s.shared_inter, s.hidden, 1}, wbytes, pk);
  }
  if (s.interleaved()) {
    const double dense = gemm_ns(s.dense_mlp_gemm(ProjOp::kGateUp, tokens), wbytes, pk) +
                         gemm_ns(s.dense_mlp_gemm(ProjOp::kDown, tokens), wbytes, pk);
    mlp = s.mean_layer(mlp, dense);
  }
  gemm += mlp;
  const AttentionWork a = AttentionWork::of(batch, s, replica.kv_dtype_bytes);
  const double attn =
      roof(a.prefill_flops, a.prefill_bytes, pk) + roof(a.decode_flops, a.decode_bytes, pk);
  double comm = 0;
  if (p_.collectives && replica.tp > 1) {
    const double p = replica.tp;
    comm = 2 * 2 * (p - 1) / p * tokens * s.hidden * 2 / pk.link_bytes_per_ns;
  }
  // A step passes every pipeline stage (one batch in flight); stage-to-stage transfers are
  // left out of this bare roofline, like everything but the roofs.
  const double layers = model.num_layers;
  // FP8 checkpoints keep the LM head in bf16 (as the analytical model and the memory planner).
  const double lm_head =
      gemm_ns({static_cast<double>(batch.num_requests()), s.hidden, s.vocab, 1}, 2, bf16);

  cost[CostComponent::kGemm] = layers * gemm;
  cost[CostComponent::kAttention] = layers * attn;
  cost[CostComponent::kCollective] = layers * comm;
  cost[CostComponent::kEmbedding] = lm_head;
  cost[CostComponent::kHost] = p_.host_floor_ns;
  double total = 0;
  for (double v : cost.breakdown_ns) total += v;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  return cost;
}

}  // namespace servesim
