#pragma once

#include <string_view>

#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// A hand-checkable cost model for tests and back-of-envelope runs:
//   t = max(step_floor_ns, prefill_ns_per_token · prefill tokens
//                          + [decodes > 0] · decode_ns_per_step
//                          + decode_ns_per_request · decodes)
// It ignores the replica (GPU, model, TP). Config keys (all optional, in ns, ≥ 0):
//   prefill_ns_per_token (default 50000), decode_ns_per_step (default 8000000),
//   decode_ns_per_request (default 0), step_floor_ns (default 1).
// The breakdown puts prefill time under kGemm, decode time under kAttention and the floor's
// excess under kHost. Immutable; thread-safe.
class FixedCostModel final : public CostModel {
 public:
  struct Params {
    double prefill_ns_per_token = 50'000;
    double decode_ns_per_step = 8'000'000;
    double decode_ns_per_request = 0;
    double step_floor_ns = 1;
  };
  explicit FixedCostModel(Params p) : p_(p) {}
  static Params parse(const ConfigNode& node);

  std::string_view name() const override { return "fixed"; }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

 private:
  Params p_;
};

}  // namespace servesim
