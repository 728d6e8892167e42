#pragma once

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

// Orca iteration-level batching (as in Vidur): every iteration runs all running requests (one
// decode token each) together with newly admitted whole prompts, FCFS, up to `max_num_seqs` and
// the token budget. A request reserves KV for its full prompt + output at admission, so nothing
// is ever preempted and no watermark applies.
class OrcaScheduler : public SchedulerBase {
 public:
  explicit OrcaScheduler(SchedulerOptions options);
  std::string_view name() const override { return "orca"; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;

 protected:
  // Its KV covers the request's whole life from admission: rejected slots stay reserved.
  void rewind_rejected(Request* /*r*/, KvCache& /*kv*/) override {}
};

}  // namespace servesim
