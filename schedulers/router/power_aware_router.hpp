#pragma once

#include <string_view>
#include <vector>

#include "schedulers/router/round_robin_router.hpp"
#include "sim/router.hpp"

namespace servesim {

// Placement on capped fleets (`router.kind: power_aware | cap_blind`; README "Power caps"). Each
// arrival goes to the replica where its prefill would finish earliest: the prefill tokens its
// outstanding requests still have to compute (ReplicaScheduler::prefill_backlog_tokens), then
// its own prompt, in steps of the replica's token budget priced by the cost model the replicas
// use, after the rest of the step in flight. `power_aware` prices each replica at
// its cap (each kernel at the clock its own activity settles at); `cap_blind` prices every
// replica at its TDP, as schedulers that assume a capped GPU runs at its uncapped peak do. The
// estimate leaves out the decodes that share those steps (both variants alike), so it ranks
// replicas, it does not forecast TTFT. Ties (equal estimates: idle or decoding replicas of one
// kind, and every pair of GPUs of one kind under cap_blind) are taken in turn.
class PowerAwareRouter : public Router {
 public:
  explicit PowerAwareRouter(bool cap_blind) : blind_(cap_blind) {}
  std::string_view name() const override { return blind_ ? "cap_blind" : "power_aware"; }
  void attach(const Fleet& fleet, const CostModel& cost_model) override;
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  struct Rep {
    ReplicaSpec spec;  // as priced: the replica's own, or at its TDP when blind
    std::int32_t budget = 0;
    double full_step_ns = 0;  // one step of `budget` prefill tokens
  };
  // `tokens` of prefill on `rep`, in steps of its budget.
  double prefill_ns(const Rep& rep, std::int64_t tokens) const;

  bool blind_;
  const CostModel* cost_model_ = nullptr;
  std::vector<Rep> reps_;
  LeastInTurn least_;  // the earliest estimate, ties in turn
};

}  // namespace servesim
