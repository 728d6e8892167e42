#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/batch_shape.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Placement on capped fleets (`router.kind: power_aware | cap_blind`; README "Power caps"). Each
// arrival goes to the replica where it would finish earliest, its whole stay priced by the cost
// model the replicas use, after the rest of the step in flight:
// - its prefill: the prefill tokens the replica's outstanding requests still have to compute
//   (ReplicaScheduler::prefill_backlog_tokens), then its own prompt, in steps that carry the
//   decodes running now and fill the rest of the token budget with prefill;
// - its decodes: output − 1 steps of every outstanding request decoding beside it
//   (ReplicaScheduler::decode_contexts, at most the replica's seats), its own context at its
//   prompt plus half its output; none on a prefill replica (disaggregated serving), which is done
//   with it at its first token.
// `power_aware` prices each replica at its cap (each kernel at the clock its own activity settles
// at); `cap_blind` prices every replica at its TDP, as schedulers that assume a capped GPU runs at
// its uncapped peak do. Like the global queue router's look-ahead it reads the request's output
// length from the trace. It ranks replicas, it does not forecast E2E: requests that arrive later
// and share those steps, and requests that finish during its stay, are left out. Ties (equal
// estimates: idle replicas of one kind, and every pair of GPUs of one kind in one state under
// cap_blind) are taken in turn.
class PowerAwareRouter : public Router {
 public:
  explicit PowerAwareRouter(bool cap_blind) : blind_(cap_blind) {}
  std::string_view name() const override { return blind_ ? "cap_blind" : "power_aware"; }
  void attach(const Fleet& fleet, const CostModel& cost_model) override;
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  // The estimate route() ranks by: from `now` to `request`'s last token on `replica` (attached).
  double estimate_ns(const Request& request, const Fleet& fleet, ReplicaId replica, SimTime now);

 private:
  struct Rep {
    ReplicaSpec spec;  // as priced: the replica's own, or at its TDP when blind
    std::int32_t budget = 0;
    std::int32_t seats = 0;
  };
  // From the end of the step in flight to `request`'s last token on `replica`.
  double stay_ns(const Rep& rep, const Replica& replica, const Request& request);

  bool blind_;
  const CostModel* cost_model_ = nullptr;
  std::vector<Rep> reps_;
  LeastInTurn least_;  // the earliest estimate, ties in turn
  BatchShape shape_;   // scratch
  std::vector<std::int32_t> later_;
};

}  // namespace servesim
