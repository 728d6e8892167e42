#pragma once

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

// Sarathi-Serve / vLLM V1 chunked prefill. Each iteration has a token budget covering all tokens
// (`max_num_batched_tokens`, Sarathi's `chunk_size`): running decodes first (1 token each,
// preempting from the tail when a block is missing), then ongoing partial prefills, then new
// requests in FCFS order while KV can be allocated above the watermark and `max_num_seqs`
// allows. A prefill's next chunk is min(remaining tokens, budget left).
// Invariants per batch: Σ tokens ≤ budget; running ≤ max_num_seqs.
class SarathiScheduler : public SchedulerBase {
 public:
  explicit SarathiScheduler(SchedulerOptions options);
  std::string_view name() const override { return "sarathi"; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;
};

}  // namespace servesim
