#pragma once

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

// Orca iteration-level batching (as in Vidur): every iteration runs all running requests (one
// decode token each) together with newly admitted whole prompts, FCFS, up to `max_num_seqs` and
// the token budget. A request reserves KV for its full prompt + output at admission, so nothing
// is ever preempted and no watermark applies.
//
// Batch waiting (TensorRT-LLM's batch_wait_timeout_iters / batch_wait_max_tokens_ratio,
// tensorrt_llm/_torch/pyexecutor/py_executor.py `_waiting_requests`): in a step with generation
// requests, the context requests it would admit are held back while the step's tokens (their
// prompts, and each generation request's token and draft tokens) stay under `ratio` × the
// token budget and fewer than `timeout` steps have waited since prompts were last admitted
// beside decodes (steps without decodes, or with no prompt that fits, leave the count as it
// is). Off (0) by default. It cannot be combined with LoRA adapters, whose admission skips
// requests waiting for an adapter slot.
class OrcaScheduler : public SchedulerBase {
 public:
  explicit OrcaScheduler(SchedulerOptions options);
  std::string_view name() const override { return "orca"; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;
  bool attach_lora(LoraCache* cache) override {
    return options_.batch_wait_timeout_iters == 0 && SchedulerBase::attach_lora(cache);
  }

 protected:
  // Its KV covers the request's whole life from admission: rejected slots stay reserved.
  void rewind_rejected(Request* /*r*/, KvCache& /*kv*/) override {}

 private:
  // The prompt tokens of the waiting requests a step holding generation requests would admit
  // (FCFS, within the seats, the token budget left and the free KV), without admitting them.
  std::int64_t admissible_prompt_tokens(const KvCache& kv, std::int32_t budget) const;
  std::int32_t batch_wait_iters_ = 0;  // steps whose context requests waited since the last
                                       // admission beside decodes
};

}  // namespace servesim
