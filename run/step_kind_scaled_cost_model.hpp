#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/cost_model.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// The step kinds the error model measures separately: a step whose prefill tokens are at least
// half its tokens is prefill-heavy; any other step is a decode step, at low batch below 64
// decodes and at high batch from 64.
enum class StepKind : std::size_t { kPrefill, kDecodeLow, kDecodeHigh, kCount };
inline constexpr std::size_t kNumStepKinds = static_cast<std::size_t>(StepKind::kCount);
inline constexpr std::int64_t kHighBatchDecodes = 64;
std::string_view step_kind_name(StepKind k);
StepKind step_kind(const BatchShape& batch);

using StepKindFactors = std::array<double, kNumStepKinds>;

// Another cost model with each step time multiplied by a factor chosen by the step's kind and
// the GPU of the replica that runs it (a GPU not listed keeps factor 1): one draw of the
// systematic pricing error, the same for every step of a kind. Energy scales with time, as in
// ScaledCostModel. `inner` must outlive it. Immutable; safe from several threads.
class StepKindScaledCostModel final : public WrappedCostModel {
 public:
  StepKindScaledCostModel(const CostModel& inner,
                          std::vector<std::pair<const GpuSpec*, StepKindFactors>> factors);
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

 private:
  std::vector<std::pair<const GpuSpec*, StepKindFactors>> factors_;
};

}  // namespace servesim
