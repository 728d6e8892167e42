#pragma once

#include <memory>
#include <set>
#include <string>

#include "schedulers/router/lookahead.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/fleet_queue.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// A QLM-like fleet-level queue (`router.kind: global_queue`; tools/README.md "Deadline
// scheduling"). Arrivals wait in one queue for the whole fleet, in deadline order (`order: edf`,
// ties by arrival, then id) or arrival order (`fcfs`); a replica that forms a batch pulls from
// its head. Each arrival's wait before its first scheduling is estimated (Request::est_wait) by
//   native     QLM's released request-waiting-time estimator (QLM-project/QLM,
//              qlm/scheduler/rwt_estimator.py with qlm/config.yaml): the requests queued ahead,
//              itself included, × `output_tokens` (QLM: 100) ÷ `tokens_per_s` (QLM: 700 for
//              Llama-3.1-8B-Instruct). It ignores batching, prompts and the running requests;
//   mechanism  the look-ahead (lookahead.hpp): the replicas' own cost model pricing the batches
//              that drain the queue ahead of it (`sustained_load: true`: a request that waits
//              is priced on at full-budget steps, as the load goes on; `reanchor_s`: the
//              least simulated time between two rebuilds of a drifting forecast, default 1);
//   none       no estimate.
// Admission control acts on a predicted miss — native: the estimated wait past the deadline (as
// QLM's check_violation compares it); mechanism: the estimated first token (TTFT classes) or
// finish (E2E classes) past the deadline:
//   keep    queue it anyway (plain EDF);
//   reject  refuse it at arrival (RejectReason::kAdmission: counted, in the request records);
//   demote  queue it behind every request not demoted (best effort, in arrival order). A queued
//           request whose deadline has passed by the time it would be pulled is demoted too: EDF
//           would otherwise serve the already-missed requests first (the domino effect).
// Requests without a deadline sort behind those with one and are never demoted or rejected.
class GlobalQueueRouter : public Router, public FleetQueue {
 public:
  enum class Order { kEdf, kFcfs };
  enum class Estimator { kNone, kNative, kMechanism };
  enum class Admission { kKeep, kReject, kDemote };
  struct Options {
    Order order = Order::kEdf;
    Estimator estimator = Estimator::kNone;
    Admission admission = Admission::kKeep;
    double native_output_tokens = 100;
    double native_tokens_per_s = 0;
    double reanchor_s = 1.0;
    bool sustained_load = false;  // Lookahead `sustained`
  };

  // Parses the router section (kind global_queue).
  static Options parse(const ConfigNode& node);
  explicit GlobalQueueRouter(Options options) : options_(options) {}

  std::string_view name() const override { return "global_queue"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  void attach(const Fleet& fleet, const CostModel& cost_model) override;
  FleetQueue* queue() override { return this; }

  Request* next_for(ReplicaId replica, SimTime now, SimTime cutoff,
                    const std::function<bool(const Request&)>& fits) override;
  void take(Request* r, ReplicaId replica, SimTime now) override;
  std::int64_t size() const override { return static_cast<std::int64_t>(queue_.size()); }

  const Options& options() const { return options_; }
  const Lookahead* lookahead() const { return lookahead_.get(); }

 private:
  struct Before {
    const Options* o;
    bool operator()(const Request* a, const Request* b) const;
  };
  // The estimate for r (arriving now, not yet queued) of its wait and of the instant its deadline
  // is judged by; false when there is none.
  bool estimate(Request& r, SimTime now, SimTime& judged);

  Options options_;
  std::set<Request*, Before> queue_{Before{&options_}};
  std::int64_t demoted_queued_ = 0;
  std::unique_ptr<Lookahead> lookahead_;
};

}  // namespace servesim
