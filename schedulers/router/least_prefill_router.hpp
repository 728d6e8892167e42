#pragma once

#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Sends each request to the replica with the fewest prompt tokens still to compute
// (ReplicaScheduler::prefill_backlog_tokens: queued prompts and unfinished prefills), ties in
// turn: the prefill router of disaggregated serving (DistServe, Splitwise), and a TTFT-minded
// router of any fleet.
class LeastPrefillRouter : public Router {
 public:
  std::string_view name() const override { return "least_prefill_tokens"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  LeastInTurn least_;
};

// The decode router of disaggregated serving: among the decode replicas with room for the
// request now, the one with the most free KV blocks, then the fewest running requests, ties in
// turn. With `local_first`, replicas on the prefill replica's node come first (the KV moves
// over NVLink instead of the network).
class MostFreeKvRouter : public Router {
 public:
  explicit MostFreeKvRouter(bool local_first) : local_first_(local_first) {}
  std::string_view name() const override { return "most_free_kv"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  bool local_first_;
  LeastInTurn least_;
  std::vector<ReplicaId> local_;  // scratch
};

}  // namespace servesim
