#include "run/step_kind_scaled_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/config/input_error.hpp"

namespace servesim {

std::string_view step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kPrefill:
      return "prefill";
    case StepKind::kDecodeLow:
      return "decode_low";
    case StepKind::kDecodeHigh:
      return "decode_high";
    case StepKind::kCount:
      break;
  }
  return "?";
}

StepKind step_kind(const BatchShape& batch) {
  const std::int64_t prefill = batch.prefill_tokens();
  if (prefill > 0 && 2 * prefill >= batch.total_tokens()) return StepKind::kPrefill;
  return batch.num_decodes() < kHighBatchDecodes ? StepKind::kDecodeLow : StepKind::kDecodeHigh;
}

StepKindScaledCostModel::StepKindScaledCostModel(
    const CostModel& inner, std::vector<std::pair<const GpuSpec*, StepKindFactors>> factors)
    : WrappedCostModel(inner), factors_(std::move(factors)) {
  for (const auto& [gpu, f] : factors_) {
    for (const double x : f) {
      if (!(x > 0) || !std::isfinite(x)) {
        throw InputError("step-time scale factor must be a positive number");
      }
    }
  }
}

StepCost StepKindScaledCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost c = inner_.step(batch, replica);
  const auto it = std::find_if(factors_.begin(), factors_.end(),
                               [&](const auto& p) { return p.first == replica.gpu; });
  if (it == factors_.end()) return c;
  const double factor = it->second[static_cast<std::size_t>(step_kind(batch))];
  c.total_ns = std::max<SimTime>(
      1, static_cast<SimTime>(std::llround(static_cast<double>(c.total_ns) * factor)));
  for (double& v : c.breakdown_ns) v *= factor;
  c.energy_j *= factor;
  c.stage_ns *= factor;
  return c;
}

}  // namespace servesim
