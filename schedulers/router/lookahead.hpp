#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "schedulers/replica/sarathi_scheduler.hpp"
#include "sim/engine/batch_shape.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/replica.hpp"

namespace servesim {

// The mechanism waiting-time estimator of the global queue router: a look-ahead of the fleet's
// chunked-prefill schedulers (sarathi, edf) that prices, with the replicas' own cost model, the
// batches that drain the queue ahead of a request, until the step that admits it, and then its
// own prefill chunks until its first token.
//
// The forecast is anchored at the real state (each replica's running requests, the step in
// flight and its end, its preempted requests, then the fleet queue in order) and kept: a request
// that joins the queue behind every queued one continues the kept forecast from the step before
// the previous request's admission, so a queue of n requests costs O(steps) in all, not
// O(n × steps). A request inserted ahead of queued ones, a queue changed otherwise (invalidate)
// or an empty queue re-anchor it, and so does drift: a request whose real first step differs from
// the forecast's (observe_start), at most once per `reanchor_ns` of simulated time (a forecast
// that keeps drifting would otherwise be rebuilt through the whole queue at every arrival).
//
// What it does not model: preemption (decodes grow into the KV cache without limit), prefix-cache
// hits, the seats and KV that async scheduling holds for requests finishing in the step in
// flight, and requests arriving after the one estimated (they cannot pass it in FCFS order; in
// EDF order a later, more urgent arrival can, and its estimate is then too short). A request's
// finish is estimated as its first token plus (output − 1) × the price of a step of the decodes
// running then: the queue it knows of is drained by then, so the prefill chunks of requests
// arriving later are not in it (under sustained overload the estimate is short). With
// `sustained`, a request that finds requests queued ahead of it is priced at steps whose budget
// the decodes and a prefill chunk fill (what a saturated replica runs).
class Lookahead {
 public:
  struct Estimate {
    SimTime start = -1;  // the step that admits it (its first scheduling)
    SimTime first_token = -1;
    SimTime finish = -1;
  };

  // `sustained`: price the decode steps of a request that finds a queue ahead of it at full-budget
  // steps (the load that queued goes on: later arrivals fill the budget with prefill chunks),
  // instead of steps of the decodes alone.
  Lookahead(const Fleet& fleet, const CostModel& cost_model, SimTime reanchor_ns,
            bool sustained = false);

  // Estimates `r`, which arrives now. `tail`: it is behind every queued request, in the queue's
  // order; `queued_ahead`: requests wait ahead of it. `queue_in_order` fills a list with the queued
  // requests ahead of r, in order (called only to re-anchor). An estimate of -1 means the
  // look-ahead found no step that admits it.
  Estimate estimate(const Request& r, SimTime now, bool tail, bool queued_ahead,
                    const std::function<void(std::vector<const Request*>&)>& queue_in_order);
  // The queue changed other than by a request joining at its tail or leaving from its head.
  void invalidate() { valid_ = false; }
  // The request last estimated does not join the queue after all (refused), or joins it behind
  // the others (demoted): the forecast forgets it.
  void withdraw(RequestId id);
  // `r`, estimated when it arrived, is first scheduled now: a start other than the estimate is
  // drift.
  void observe_start(const Request& r, SimTime now) {
    if (r.est_wait >= 0 && r.spec.arrival + r.est_wait != now) drifted_ = true;
  }
  // Times the forecast was rebuilt from the real state.
  std::int64_t anchorings() const { return anchorings_; }
  // Steps priced so far (a measure of its cost).
  std::int64_t steps_priced() const { return steps_priced_; }

 private:
  struct Item {
    RequestId id = 0;
    SimTime arrival = 0;
    std::int32_t prompt = 0;
    std::int32_t output = 0;
    std::int32_t computed = 0;
    std::int32_t generated = 0;
    std::int64_t blocks = 0;
    // Past its prompt with one token to compute: a decode (Request::is_decode).
    bool decoding() const { return generated > 0 && computed + 1 == prompt + generated; }
  };
  struct Rep {
    const Replica* real = nullptr;
    const SarathiScheduler* scheduler = nullptr;
    SimTime free_at = 0;  // when it forms its next step; kIdle: nothing to do
    SimTime last_start = -1;
    SimTime last_end = -1;
    std::vector<Item> running;
    std::deque<Item> preempted;  // its own waiting queue: admitted before the fleet queue's
    std::int64_t used_blocks = 0;
  };
  static constexpr SimTime kIdle = INT64_MAX;

  static Item item_of(const Request& r);
  void anchor(SimTime now, const std::vector<const Request*>& queue);
  // Forms, prices and applies the next step of `rep` at rep.free_at. `admitted` gets the items
  // it took from the fleet queue; with `admit` false it takes none. Returns the step's duration,
  // 0 when there was nothing to run (the replica goes idle).
  SimTime step(Rep& rep, bool admit, std::vector<Item>* admitted);

  const Fleet& fleet_;
  const CostModel& cost_model_;
  SimTime reanchor_ns_;
  bool sustained_;
  std::vector<Rep> reps_;
  std::deque<Item> queue_;  // the fleet queue in the forecast (not yet admitted in it)
  bool valid_ = false;
  bool drifted_ = false;
  SimTime anchored_at_ = 0;
  std::int64_t anchorings_ = 0;
  BatchShape shape_;
  std::vector<std::pair<std::size_t, std::int32_t>> entries_;  // scratch: running index, tokens
  std::int64_t steps_priced_ = 0;
};

}  // namespace servesim
