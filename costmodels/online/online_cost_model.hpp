#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/engine/cost_model.hpp"

namespace servesim {

// An online learner: another cost model whose step time and per-request overhead
// are learned from measured request latencies as a run goes. What a step learns is either
// - a scale (`Learn::kScale`, the default): every step costs the base's price × a learned factor,
//   moved by each finished request's ITL ratio, factor ×= 1 + alpha · (measured / simulated − 1);
//   it stops at [kMinScale, kMaxScale]: a price off by more than 2× is a wrong model, not a
//   miscalibrated one (and in an overloaded replay, where queueing feeds the ITL back, an unbounded
//   scale runs away); or
// - a floor (`Learn::kFloor`): every step costs the base's price plus a learned
//   offset on the host component, offset += alpha · (measured ITL − simulated ITL); a decode step
//   carries the floor once, so an ITL residual is a floor residual. The offset stops at minus the
//   base's least host time of a step (the total never below 1 ns).
// (ITL = (E2E − TTFT) / (N − 1).) Every request costs the base's overhead plus a learned one,
//   overhead += alpha · (measured TTFT − simulated TTFT − overhead), which stops at minus the
// base's. Frozen mode learns only from requests with id < learn_requests (the first part of a
// run) and never again — what a deployment can do, since it cannot see the latencies it predicts;
// peeking mode learns from every request (a diagnostic, not a prediction). The time a step gains
// or loses is priced at the replica's idle power. Not thread-safe: one run at a time (its state
// changes as the run observes requests). `base` must outlive it.
class OnlineCostModel final : public CostModel {
 public:
  enum class Mode { kFrozen, kPeeking };
  enum class Learn { kScale, kFloor };
  static constexpr double kMinScale = 0.5;
  static constexpr double kMaxScale = 2.0;
  struct Options {
    double alpha = 0.05;
    Mode mode = Mode::kFrozen;
    Learn learn = Learn::kScale;
    std::int64_t learn_requests = 0;  // frozen: ids below it are learned from
  };
  // One finished request: what was measured and what this run simulated (times in ns, the
  // simulated ones without any request overhead).
  struct Observation {
    std::int64_t id = 0;
    double measured_ttft_ns = 0;
    double measured_e2e_ns = 0;
    double simulated_ttft_ns = 0;
    double simulated_e2e_ns = 0;
    std::int32_t output_tokens = 0;
  };

  OnlineCostModel(const CostModel& base, const Options& options);

  std::string_view name() const override { return "online"; }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;
  SimTime request_overhead_ns() const override;
  bool prices_power_cap() const override { return base_.prices_power_cap(); }
  bool prices_moe_parallelism() const override { return base_.prices_moe_parallelism(); }
  double idle_power_w(const ReplicaSpec& r) const override { return base_.idle_power_w(r); }

  // Learns from `o` unless frozen mode excludes it; returns whether it did.
  bool observe(const Observation& o);
  double step_offset_ns() const { return step_offset_ns_; }
  double step_scale() const { return step_scale_; }
  double overhead_offset_ns() const { return overhead_offset_ns_; }
  std::int64_t observations() const { return static_cast<std::int64_t>(history_.size()); }
  // The step offset (kFloor, ns) or scale (kScale) after each observation learned from, in order
  // (convergence).
  const std::vector<double>& history() const { return history_; }

 private:
  const CostModel& base_;
  Options options_;
  double step_offset_ns_ = 0;
  double step_scale_ = 1;
  double overhead_offset_ns_ = 0;
  // The least host time the base priced for a step so far: the floor cannot fall below zero,
  // so the offset stops there (no wind-up while residuals it cannot remove keep coming).
  mutable double min_host_ns_ = -1;
  std::vector<double> history_;
};

}  // namespace servesim
