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
class SarathiScheduler : public SchedulerBase {
 public:
  explicit SarathiScheduler(SchedulerOptions options);
  std::string_view name() const override { return "sarathi"; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;
  void complete_batch(const Batch& batch, SimTime now, KvCache& kv,
                      std::vector<Request*>& finished) override;

 private:
  // Admits waiting requests that arrived by `cutoff`, FCFS, within budget and seats.
  void admit(SimTime cutoff, KvCache& kv, Batch& batch);
  // Async scheduling: a finished request's KV stays held until the next batch is formed.
  void release_finished(Request* r, KvCache& kv) override;
  void release_deferred(KvCache& kv);

  // KV of requests that finished in the step in flight (async scheduling).
  struct Finished {
    std::int64_t held = 0;
    std::int64_t shared = 0;
    BlockKeys keys;
  };
  std::vector<Finished> finished_kv_;

  SimTime last_start_ = -1;  // start of the step in flight (async scheduling)
  SimTime last_end_ = -1;    // end of the last completed step
};

}  // namespace servesim
