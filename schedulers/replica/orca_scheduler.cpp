#include "schedulers/replica/orca_scheduler.hpp"

#include <algorithm>

namespace servesim {

OrcaScheduler::OrcaScheduler(SchedulerOptions options) : SchedulerBase(options) {
  default_budget_to_whole_prompts();
}

void OrcaScheduler::next_batch(SimTime /*now*/, KvCache& kv, Batch& batch) {
  std::int32_t budget = options_.max_num_batched_tokens;
  if (options_.num_speculative_tokens > 0) {
    for (Request* r : running_) {
      if (r->in_flight) continue;  // computing in a step of another pipeline stage
      const std::int32_t tokens = decode_tokens(r, std::max(budget, 1));
      schedule_decode(batch, r, tokens);
      budget -= tokens;
    }
  } else {  // one token each, in a loop of its own (the plain decode path)
    for (Request* r : running_) {
      if (r->in_flight) continue;
      schedule(batch, r, 1);
      --budget;
    }
  }
  if (options_.batch_wait_timeout_iters > 0 && !batch.empty() && !waiting_.empty()) {
    const std::int64_t prompts = admissible_prompt_tokens(kv, budget);
    if (prompts > 0) {
      // The generation requests' tokens are what they took of the budget.
      const double tokens = static_cast<double>(prompts + options_.max_num_batched_tokens - budget);
      if (batch_wait_iters_ < options_.batch_wait_timeout_iters &&
          tokens < options_.batch_wait_max_tokens_ratio * options_.max_num_batched_tokens) {
        ++batch_wait_iters_;
        return;
      }
      batch_wait_iters_ = 0;
    }
  }
  while (!waiting_.empty() && static_cast<std::int32_t>(running_.size()) < options_.max_num_seqs) {
    if (lora_ != nullptr && !lora_ready_front()) break;
    Request* r = waiting_.front();
    const std::int32_t tokens = r->pending_tokens();
    // Orca reserves the request's whole life at admission: it never grows or preempts.
    if ((tokens > budget && !batch.empty()) || !kv.grow(r->kv_blocks, r->spec.peak_kv_tokens())) {
      if (lora_ != nullptr) lora_restore_front();
      break;
    }
    if (lora_ != nullptr) lora_admitted(r, batch);
    admit_head();
    schedule_prefill(batch, r, tokens, kv);
    budget -= tokens;
  }
}

std::int64_t OrcaScheduler::admissible_prompt_tokens(const KvCache& kv, std::int32_t budget) const {
  std::int64_t prompts = 0;
  std::int64_t free = kv.free_blocks();
  auto seats =
      static_cast<std::int64_t>(options_.max_num_seqs) - static_cast<std::int64_t>(running_.size());
  for (const Request* r : waiting_) {
    const std::int32_t tokens = r->pending_tokens();
    const std::int64_t blocks = kv.extra_for(r->kv_blocks, r->spec.peak_kv_tokens());
    if (seats <= 0 || tokens > budget || blocks > free) break;
    prompts += tokens;
    budget -= tokens;
    free -= blocks;
    --seats;
  }
  return prompts;
}

}  // namespace servesim
