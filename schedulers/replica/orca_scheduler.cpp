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

}  // namespace servesim
