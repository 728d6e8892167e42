#include "schedulers/replica/vllm_scheduler.hpp"

#include <algorithm>

namespace servesim {

VllmScheduler::VllmScheduler(SchedulerOptions options) : SchedulerBase(options) {
  default_budget_to_whole_prompts();
}

void VllmScheduler::next_batch(SimTime /*now*/, KvCache& kv, Batch& batch) {
  std::int32_t budget = options_.max_num_batched_tokens;
  while (!waiting_.empty() && static_cast<std::int32_t>(running_.size()) < options_.max_num_seqs) {
    if (!admit_head_into(batch, kv, budget, /*whole=*/true)) break;
    budget -= batch.entries.back().tokens;
  }
  if (!batch.empty()) return;
  if (options_.num_speculative_tokens > 0) {
    for (std::size_t i = 0; i < running_.size(); ++i) {
      Request* r = running_[i];
      if (r->in_flight) continue;  // computing in a step of another pipeline stage
      const std::int32_t tokens = decode_tokens(r, std::max(budget, 1));
      if (!grow_or_preempt(r, tokens, kv, batch)) break;
      schedule_decode(batch, r, tokens);
      budget -= tokens;
    }
    return;
  }
  // One token each: a loop of its own keeps the plain decode path as lean as it can be.
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Request* r = running_[i];
    if (r->in_flight) continue;
    if (!grow_or_preempt(r, 1, kv, batch)) break;
    schedule(batch, r, 1);
  }
}

}  // namespace servesim
