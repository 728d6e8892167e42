#include "costmodels/lora/lora_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "costmodels/common/layer_shapes.hpp"

namespace servesim {
namespace {

constexpr double kBf16Bytes = 2;

// Per-GPU input and output widths of a projection under the shapes' TP.
struct Widths {
  double in = 0;
  double out = 0;
};

Widths widths(LoraModule m, const LayerShapes& s, const ModelSpec& model) {
  const double inter = std::ceil(static_cast<double>(model.dense_mlp_width()) / s.tp);
  switch (m) {
    case LoraModule::kQ:
      return {s.hidden, s.attn_width};
    case LoraModule::kK:
    case LoraModule::kV:
      return {s.hidden, s.kv_heads * s.head_dim};
    case LoraModule::kO:
      return {s.attn_width, s.hidden};
    case LoraModule::kGate:
    case LoraModule::kUp:
      return {s.hidden, inter};
    case LoraModule::kDown:
      return {inter, s.hidden};
  }
  return {};
}

}  // namespace

double lora_adapter_bytes(const LoraConfig& config, std::int32_t rank, const ModelSpec& model,
                          int tp) {
  const LayerShapes s = LayerShapes::make(model, tp);
  double per_layer = 0;
  for (const LoraModule m : config.target_modules) {
    const Widths w = widths(m, s, model);
    per_layer += rank * (w.in + w.out) * kBf16Bytes;
  }
  return per_layer * model.num_layers;
}

double lora_step_ns(const std::vector<LoraSlice>& slices, const LoraConfig& config,
                    const ReplicaSpec& replica) {
  if (slices.empty()) return 0;
  const GpuSpec& gpu = *replica.gpu;
  const ModelSpec& model = *replica.model;
  const LayerShapes s = LayerShapes::make(model, replica.tp);
  const double flops_per_ns = gpu.bf16_flop_per_ns();
  const double bytes_per_ns = gpu.memory_bw_gb_per_s;
  double per_layer = 0;
  for (const LoraModule m : config.target_modules) {
    const Widths w = widths(m, s, model);
    double shrink_flops = 0;
    double shrink_bytes = 0;
    double expand_flops = 0;
    double expand_bytes = 0;
    for (const LoraSlice& a : slices) {
      const double r = config.rank_of(a.adapter);
      const GemmShape shrink{static_cast<double>(a.tokens), w.in, r, 1};
      const GemmShape expand{static_cast<double>(a.tokens), r, w.out, 1};
      shrink_flops += shrink.flops();
      shrink_bytes += shrink.bytes(kBf16Bytes);
      expand_flops += expand.flops();
      expand_bytes += expand.bytes(kBf16Bytes);
    }
    per_layer += std::max(shrink_flops / flops_per_ns, shrink_bytes / bytes_per_ns) +
                 std::max(expand_flops / flops_per_ns, expand_bytes / bytes_per_ns);
  }
  return per_layer * model.num_layers;
}

LoraCostModel::LoraCostModel(std::shared_ptr<const CostModel> inner, LoraConfig config)
    : WrappedCostModel(*inner), owner_(std::move(inner)), config_(std::move(config)) {}

StepCost LoraCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost cost = inner_.step(batch, replica);
  if (batch.lora.empty()) return cost;
  const double ns = lora_step_ns(batch.lora, config_, replica);
  cost[CostComponent::kGemm] += ns;
  cost.total_ns += static_cast<SimTime>(std::llround(ns));
  return cost;
}

}  // namespace servesim
