#pragma once

#include <string_view>

#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// The bare roofline: every projection GEMM, attention and the LM head cost
// max(FLOPs / datasheet peak, bytes / datasheet bandwidth) at 100% efficiency; TP all-reduces
// cost 2(p−1)/p · bytes / link bandwidth; a constant host floor is added per step. Light
// kernels (norms, activation, RoPE) are ignored. It is the lower bound the analytical model
// improves on. Config keys: host_floor_ns (default 0, ≥ 0),
// collectives (default true). Immutable; thread-safe.
class RooflineCostModel final : public CostModel {
 public:
  struct Params {
    double host_floor_ns = 0;
    bool collectives = true;
  };
  explicit RooflineCostModel(Params p) : p_(p) {}
  static Params parse(const ConfigNode& node);

  std::string_view name() const override { return "roofline"; }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

 private:
  Params p_;
};

}  // namespace servesim
