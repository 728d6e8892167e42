#include "schedulers/replica/edf_scheduler.hpp"

#include <algorithm>

namespace servesim {

bool EdfScheduler::before(const Request* a, const Request* b) {
  if (a->deadline != b->deadline) return a->deadline < b->deadline;
  if (a->spec.arrival != b->spec.arrival) return a->spec.arrival < b->spec.arrival;
  return a->id < b->id;
}

void EdfScheduler::enqueue(Request* request, SimTime /*now*/) { requeue(request); }

void EdfScheduler::requeue(Request* r) {
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), r, before), r);
}

bool EdfScheduler::make_room_for(Request* head, KvCache& kv, Batch& batch) {
  if (!options_.preempt_for_deadline) return false;
  Request* victim = nullptr;
  for (Request* r : running_) {
    if (r->in_flight) continue;  // computing in a step of another pipeline stage
    if (before(head, r) && (victim == nullptr || before(victim, r))) victim = r;
  }
  if (victim == nullptr) return false;
  preempt(victim, kv, batch);
  return true;
}

}  // namespace servesim
