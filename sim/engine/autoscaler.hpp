#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sim/config/autoscaling_config.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/run_observer.hpp"
#include "sim/engine/slo.hpp"

namespace servesim {

// Where a replica of an autoscaled fleet is. Billed: provisioning, active and draining.
enum class ReplicaState : std::int8_t { kOff, kProvisioning, kActive, kDraining };

// One evaluation of the autoscaler: the fleet after its decision at `time`, and what happened in
// the interval that ended there.
struct AutoscaleSample {
  SimTime time = 0;
  std::int32_t active = 0;
  std::int32_t provisioning = 0;
  std::int32_t draining = 0;
  std::int32_t desired = 0;        // the HPA recommendation before stabilization; -1: no metric
  double metric = 0;               // the windowed metric the decision used (NaN: none)
  std::int64_t arrivals = 0;       // in the interval
  std::int64_t output_tokens = 0;  // emitted in the interval
  SimTime billed_ns = 0;           // replica-ns billed in the interval (exact, integer)
  double utilisation = 0;          // busy share of the serving (active, draining) replica time
};

// One change of a replica's state.
struct ReplicaTransition {
  SimTime time = 0;
  ReplicaId replica = 0;
  ReplicaState to = ReplicaState::kOff;
};

// The Kubernetes HPA rule over a fleet built with max_replicas identical replicas
// (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#algorithm-details):
// every interval, desired = ceil(current × metric / target), where current counts the active and
// provisioning replicas and the metric is the fleet's total over `current` (a provisioning replica
// counts as unloaded, as the HPA counts a pod not yet ready when it scales up) averaged over the
// evaluations of the window; no change while |metric / target − 1| ≤ tolerance; clamped to
// [min_replicas, max_replicas]; a scale-down takes the highest recommendation of the
// stabilization window. Scaling up reactivates draining replicas first (they are still loaded),
// then provisions off ones (lowest id first), which become active after the provisioning delay.
// Scaling down cancels provisioning replicas first, then drains the active ones with the fewest
// outstanding requests (highest id on a tie): a draining replica takes no new request, finishes
// what it has, and is released (off) when it holds nothing.
// Invariants: min_replicas ≤ active + provisioning ≤ max_replicas after every decision; active ≥ 1
// (initial replicas start active at time 0); the billed integral is exact in integer ns.
// Single-threaded, driven by the engine; as a RunObserver it counts tokens and SLO outcomes.
class Autoscaler final : public RunObserver {
 public:
  Autoscaler(const AutoscalingConfig& config, SimTime provisioning_delay, std::size_t fleet_size,
             SloPolicy slo, SimTime request_overhead_ns);

  const AutoscalingConfig& config() const { return config_; }
  SimTime provisioning_delay() const { return delay_; }
  ReplicaState state(ReplicaId id) const { return states_[static_cast<std::size_t>(id)]; }
  bool is_active(ReplicaId id) const { return state(id) == ReplicaState::kActive; }
  // The active replicas, ascending: the ones a router may be offered.
  const std::vector<ReplicaId>& active() const { return active_; }

  // Evaluates the metric at `now` and applies the decision; `arrived` is the run's arrivals so
  // far. Appends the replicas that started provisioning (each becomes active at now + delay).
  void evaluate(const Fleet& fleet, SimTime now, std::int64_t arrived,
                std::vector<ReplicaId>& provisioning_started);
  // A provisioning replica's delay ended at `now`: it becomes active. False when it was
  // cancelled in between (and is off, or provisioning again with a later end).
  bool activate(ReplicaId id, SimTime now);
  // Releases a draining replica that holds no request; returns whether it did.
  bool release_if_drained(const Replica& replica, SimTime now);
  // Closes the billed integral at the end of the run (the last sample's interval ends there).
  void finish(const Fleet& fleet, SimTime now, std::int64_t arrived);

  const std::vector<AutoscaleSample>& samples() const { return samples_; }
  // Every state change in time order, the initial replicas' activation at time 0 first.
  const std::vector<ReplicaTransition>& transitions() const { return transitions_; }
  SimTime billed_ns() const { return billed_ns_; }
  std::int64_t scale_ups() const { return scale_ups_; }
  std::int64_t scale_downs() const { return scale_downs_; }
  std::int32_t peak_billed() const { return peak_billed_; }

  void on_tokens(std::span<const TokenEvent> tokens, SimTime now) override;
  void on_request_done(const Request& request, bool rejected) override;

 private:
  struct Tick {
    SimTime time = 0;
    double load = 0;  // the fleet's total of the metric (queue, KV share) at the tick
    std::int32_t current = 0;
    std::int64_t ended = 0;  // requests that ended in the interval (slo_miss)
    std::int64_t missed = 0;
  };
  void set_state(ReplicaId id, ReplicaState s, SimTime now);
  void advance(SimTime now);  // accrues the billed integral up to now
  std::int32_t count(ReplicaState s) const { return counts_[static_cast<std::size_t>(s)]; }
  void rebuild_active();
  void sample(const Fleet& fleet, SimTime now, std::int64_t arrived, std::int32_t desired,
              double metric);

  AutoscalingConfig config_;
  SimTime delay_;
  SloPolicy slo_;  // its own copy: a BuiltRun that holds the autoscaler may move
  SimTime overhead_ns_;
  std::vector<ReplicaState> states_;
  std::vector<SimTime> ready_at_;  // when a provisioning replica becomes active
  std::int32_t counts_[4] = {0, 0, 0, 0};
  std::vector<ReplicaId> active_;
  std::deque<Tick> ticks_;                                        // within the window
  std::deque<std::pair<SimTime, std::int32_t>> recommendations_;  // within the stabilization
  std::vector<AutoscaleSample> samples_;
  std::vector<ReplicaTransition> transitions_;
  SimTime billed_ns_ = 0;
  SimTime billed_at_ = 0;
  SimTime last_sample_ = 0;
  SimTime billed_at_last_sample_ = 0;
  SimTime busy_at_last_sample_ = 0;
  std::int64_t arrived_at_last_sample_ = 0;
  std::int64_t tokens_ = 0;
  std::int64_t tokens_at_last_sample_ = 0;
  std::int64_t ended_ = 0;
  std::int64_t missed_ = 0;
  SimTime serving_ns_at_last_sample_ = 0;
  SimTime serving_ns_ = 0;  // integral of active + draining replicas
  std::int64_t scale_ups_ = 0;
  std::int64_t scale_downs_ = 0;
  std::int32_t peak_billed_ = 0;
  bool finished_ = false;
};

}  // namespace servesim
