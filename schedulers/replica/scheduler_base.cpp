#include "schedulers/replica/scheduler_base.hpp"

#include <algorithm>

namespace servesim {

void SchedulerBase::enqueue(Request* request, SimTime /*now*/) { waiting_.push_back(request); }

void SchedulerBase::schedule(Batch& batch, Request* r, std::int32_t tokens) {
  r->step_tokens = tokens;
  batch.entries.push_back(BatchEntry{r, tokens});
}

void SchedulerBase::preempt(Request* r, KvCache& kv, Batch& batch) {
  if (r->step_tokens > 0) {
    auto& e = batch.entries;
    e.erase(std::remove_if(e.begin(), e.end(), [r](const BatchEntry& x) { return x.request == r; }),
            e.end());
    r->step_tokens = 0;
  }
  kv.release(r->kv_blocks);
  r->computed = 0;
  ++r->preemptions;
  ++batch.preempted;
  running_.erase(std::find(running_.begin(), running_.end(), r));
  waiting_.push_front(r);
}

bool SchedulerBase::grow_or_preempt(Request* r, std::int32_t tokens, KvCache& kv, Batch& batch) {
  while (!kv.grow(r->kv_blocks, static_cast<std::int64_t>(r->computed) + tokens)) {
    Request* victim = running_.back();
    preempt(victim, kv, batch);
    if (victim == r) return false;
  }
  return true;
}

void SchedulerBase::admit_head() {
  running_.push_back(waiting_.front());
  waiting_.pop_front();
}

void SchedulerBase::complete_batch(const Batch& batch, SimTime /*now*/, KvCache& kv,
                                   std::vector<Request*>& finished) {
  bool any_done = false;
  for (const auto& e : batch.entries) {
    if (e.request->done()) {
      kv.release(e.request->kv_blocks);
      finished.push_back(e.request);
      any_done = true;
    }
  }
  if (any_done) {
    running_.erase(std::remove_if(running_.begin(), running_.end(),
                                  [](const Request* r) { return r->done(); }),
                   running_.end());
  }
}

}  // namespace servesim
