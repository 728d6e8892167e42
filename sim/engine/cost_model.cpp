#include "sim/engine/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {

std::string CostModel::power_cap_problem(double watts) const {
  if (watts <= 0 || prices_power_cap()) return "";
  return fmt::format("the {} cost model does not price power caps", name());
}

StepCost CostModel::lone_prefill(const ReplicaSpec& replica, std::int32_t tokens) const {
  BatchShape shape;
  shape.prefills.push_back({tokens, 0});
  return step(shape, replica);
}

std::string_view cost_component_name(CostComponent c) {
  switch (c) {
    case CostComponent::kGemm:
      return "gemm";
    case CostComponent::kAttention:
      return "attention";
    case CostComponent::kLight:
      return "light";
    case CostComponent::kCollective:
      return "collective";
    case CostComponent::kEmbedding:
      return "embedding";
    case CostComponent::kHost:
      return "host";
    case CostComponent::kCount:
      break;
  }
  return "?";
}

ScaledCostModel::ScaledCostModel(const CostModel& inner, double factor)
    : WrappedCostModel(inner), factor_(factor) {
  if (!(factor > 0) || !std::isfinite(factor)) {
    throw InputError("step-time scale factor must be a positive number");
  }
}

StepCost ScaledCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost c = inner_.step(batch, replica);
  c.total_ns = std::max<SimTime>(
      1, static_cast<SimTime>(std::llround(static_cast<double>(c.total_ns) * factor_)));
  for (double& v : c.breakdown_ns) v *= factor_;
  c.energy_j *= factor_;
  c.stage_ns *= factor_;
  return c;
}

}  // namespace servesim
