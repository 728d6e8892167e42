#pragma once

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/batch.hpp"
#include "sim/engine/kv_cache.hpp"
#include "sim/engine/replica_scheduler.hpp"
#include "sim/engine/request.hpp"

namespace servesim::test {

// Drives one ReplicaScheduler the way Engine::try_start and Engine::on_step_end do, without an
// engine, cost model or event queue: each step takes kStepNs of simulated time. The harness owns
// the requests (a deque, so their addresses stay valid) and hands the scheduler pointers.
// Not thread-safe.
class SchedulerHarness {
 public:
  static constexpr SimTime kStepNs = 1000;

  SchedulerHarness(std::unique_ptr<ReplicaScheduler> scheduler, KvCache kv)
      : scheduler_(std::move(scheduler)), kv_(kv) {}

  ReplicaScheduler& scheduler() { return *scheduler_; }
  KvCache& kv() { return kv_; }
  const Batch& batch() const { return batch_; }
  std::deque<Request>& requests() { return requests_; }
  Request& request(RequestId id) { return requests_.at(static_cast<std::size_t>(id)); }
  const std::vector<Request*>& finished() const { return finished_; }
  std::int64_t steps() const { return steps_; }
  std::int64_t preemptions() const { return preemptions_; }
  SimTime now() const { return now_; }

  // Creates a request (ids 0, 1, 2, … in creation order) and enqueues it now; its first
  // `prefix_tokens` are shared with the other requests of `prefix_group` (-1: none).
  Request& add(std::int32_t prompt_tokens, std::int32_t output_tokens,
               std::int64_t prefix_group = -1, std::int32_t prefix_tokens = 0) {
    Request& r = requests_.emplace_back();
    r.id = static_cast<RequestId>(requests_.size() - 1);
    r.spec.arrival = now_;
    r.spec.prompt_tokens = prompt_tokens;
    r.spec.output_tokens = output_tokens;
    r.spec.prefix_group = prefix_group;
    r.spec.prefix_tokens = prefix_tokens;
    r.replica = 0;
    scheduler_->enqueue(&r, now_);
    return r;
  }

  // Forms the next batch (Engine::try_start without the cost model).
  const Batch& form() {
    batch_.clear();
    scheduler_->next_batch(now_, kv_, batch_);
    preemptions_ += batch_.preempted;
    return batch_;
  }

  // Applies the formed batch as Engine::on_step_end does, then lets the scheduler retire the
  // requests that are done. Returns the requests finished by this step.
  std::vector<Request*> apply() {
    now_ += kStepNs;
    ++steps_;
    std::vector<Request*> done;
    for (const auto& e : batch_.entries) {
      Request& r = *e.request;
      r.computed += e.tokens;
      r.step_tokens = 0;
      if (r.computed == r.target_tokens()) {
        ++r.generated;
        if (r.first_token < 0) r.first_token = now_;
        r.last_token = now_;
        if (r.done()) done.push_back(&r);
      }
    }
    scheduler_->complete_batch(batch_, done, now_, kv_);
    for (Request* r : done) r->finished = now_;
    finished_.insert(finished_.end(), done.begin(), done.end());
    return done;
  }

  // form() then apply(); false (nothing applied) when the batch is empty.
  bool step() {
    if (form().empty()) return false;
    apply();
    return true;
  }

  // Steps until every request finished; false on an empty batch with work left or after
  // `max_steps` steps.
  bool run_to_completion(std::int64_t max_steps = 100000) {
    for (std::int64_t i = 0; i < max_steps; ++i) {
      if (finished_.size() == requests_.size()) return true;
      if (!step()) return false;
    }
    return finished_.size() == requests_.size();
  }

  // The formed batch as "A:512 B:24" (request id 0 is A, 1 is B, …; ids past Z print as #id).
  std::string entries() const {
    std::string out;
    for (const auto& e : batch_.entries) {
      if (!out.empty()) out += ' ';
      out += fmt::format("{}:{}", label(e.request->id), e.tokens);
    }
    return out;
  }

  // Forms and applies up to `n` steps, returning each formed batch as entries() (with
  // " (preempted N)" appended when the step preempted); stops early at an empty batch.
  std::vector<std::string> trace(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      if (form().empty()) break;
      std::string s = entries();
      if (batch_.preempted > 0) s += fmt::format(" (preempted {})", batch_.preempted);
      out.push_back(std::move(s));
      apply();
    }
    return out;
  }

  static std::string label(RequestId id) {
    return id < 26 ? std::string(1, static_cast<char>('A' + id)) : fmt::format("#{}", id);
  }

 private:
  std::unique_ptr<ReplicaScheduler> scheduler_;
  KvCache kv_;
  Batch batch_;
  std::deque<Request> requests_;
  std::vector<Request*> finished_;
  SimTime now_ = 0;
  std::int64_t steps_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace servesim::test
