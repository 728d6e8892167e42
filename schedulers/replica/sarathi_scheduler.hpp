#pragma once

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

// Sarathi-Serve / vLLM V1 chunked prefill. Each iteration has a token budget covering all tokens
// (`max_num_batched_tokens`, Sarathi's `chunk_size`): running decodes first (1 token each,
// preempting from the tail when a block is missing), then ongoing partial prefills, then new
// requests in FCFS order while KV can be allocated above the watermark and `max_num_seqs`
// allows. A prefill's next chunk is min(remaining tokens, budget left).
// Invariants per batch: Σ tokens ≤ budget; running ≤ max_num_seqs.
// With `async_scheduling`, a batch that follows a step back to back was formed when that step
// started: only requests that had arrived by then are admitted, and requests that finished in
// that step still hold their seats and KV while it is formed (vLLM V1 schedules step N+1 before
// it processes step N's output); an idle replica schedules at once.
// Attached to a fleet-level queue (attach_queue), it admits from that queue, in the queue's
// order, whenever its own waiting queue (then only preempted requests) has nothing to admit.
// Serves either role of prefill/decode disaggregation.
class SarathiScheduler : public SchedulerBase,
                         public PrefillRole,
                         public DecodeRole,
                         public FleetQueuePuller {
 public:
  explicit SarathiScheduler(SchedulerOptions options);
  std::string_view name() const override { return "sarathi"; }
  void attach_queue(FleetQueue* queue, ReplicaId self) override {
    queue_ = queue;
    self_ = self;
  }
  void release_handed_off(Request* request, KvCache& kv) override {
    release_transferred_kv(request, kv);
  }
  void accept_transferred(Request* request, SimTime /*now*/) override { join_running(request); }
  // What a look-ahead of this scheduler reads (schedulers/router/lookahead.hpp).
  const std::deque<Request*>& waiting() const { return waiting_; }
  const std::vector<Request*>& running() const { return running_; }
  // Start of the step in flight, or -1 (async scheduling admits by it).
  SimTime step_start() const { return last_start_; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;
  void complete_batch(const Batch& batch, std::span<Request* const> finished, SimTime now,
                      KvCache& kv) override;

 private:
  // Admits waiting requests that arrived by `cutoff`, in queue order, within `budget` tokens and
  // the seats: the own waiting queue's first, then the fleet queue's.
  void admit(SimTime now, SimTime cutoff, KvCache& kv, Batch& batch, std::int32_t budget);
  // Async scheduling: a finished request's KV stays held until the next batch is formed.
  void release_finished(Request* r, KvCache& kv) override;
  void release_deferred(KvCache& kv);
  // Step 1 of next_batch, the decodes, oldest first, within `budget` tokens: where step 2 starts
  // and the budget left. Instantiated apart for speculative runs, so that the plain loop carries
  // none of their work.
  struct DecodePass {
    std::size_t partial_from = 0;
    std::int32_t budget = 0;
  };
  template <bool kSpeculative>
  DecodePass schedule_decodes(KvCache& kv, Batch& batch, std::int32_t budget);

 protected:
  // Called when the head of the waiting queue cannot get its KV: may preempt a running request
  // for it (true: something was freed, try again). Sarathi never does.
  virtual bool make_room_for(Request* /*head*/, KvCache& /*kv*/, Batch& /*batch*/) { return false; }

 private:
  // KV of requests that finished in the step in flight (async scheduling).
  struct Finished {
    std::int64_t held = 0;
    std::int64_t shared = 0;
    BlockKeys keys;
  };
  std::vector<Finished> finished_kv_;

  FleetQueue* queue_ = nullptr;
  ReplicaId self_ = kNoReplica;
  SimTime last_start_ = -1;  // start of the step in flight (async scheduling)
  SimTime last_end_ = -1;    // end of the last completed step
};

}  // namespace servesim
