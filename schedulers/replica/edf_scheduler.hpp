#pragma once

#include "schedulers/replica/sarathi_scheduler.hpp"

namespace servesim {

// Earliest deadline first on vLLM V1 chunked prefill (`scheduler.kind: edf`): the sarathi
// scheduler with its waiting queue ordered by Request::deadline (sim/engine/slo.hpp), ties by
// arrival, then by id; preempted requests re-enter by their deadline too. Budgets, seats, KV
// admission and decode-first batching are sarathi's. Requests without a deadline (no SLO, or a
// class without TTFT or E2E bound) sort behind every request with one, in arrival order. With
// `preempt_for_deadline: true`, a waiting request whose KV does not fit preempts the running
// request with the latest deadline, if that is later than its own (recompute), until it fits.
// vLLM V1's `--scheduling-policy priority` orders its waiting queue by (priority, arrival) the
// same way, with priority = the deadline; it preempts by priority only when a running request
// needs a block, never to admit a waiting one: this option is what it would need for that.
class EdfScheduler : public SarathiScheduler {
 public:
  explicit EdfScheduler(SchedulerOptions options) : SarathiScheduler(options) {}
  std::string_view name() const override { return "edf"; }
  void enqueue(Request* request, SimTime now) override;

  // The EDF order: earlier deadline, then earlier arrival, then lower id.
  static bool before(const Request* a, const Request* b);

 protected:
  void requeue(Request* r) override;
  bool make_room_for(Request* head, KvCache& kv, Batch& batch) override;
};

}  // namespace servesim
