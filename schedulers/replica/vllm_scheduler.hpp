#pragma once

#include "schedulers/replica/scheduler_base.hpp"

namespace servesim {

// vLLM V0 without chunked prefill: an iteration is either prefill-only or decode-only. While
// requests wait, whole prompts are admitted FCFS up to `max_num_batched_tokens`, `max_num_seqs`
// and the KV watermark, and run as a prefill iteration. Otherwise every running request decodes
// one token; when a block is missing the newest running request is preempted (recompute).
// Invariant: a prefill iteration never exceeds the token budget; prompts are never split.
// Serves either role of prefill/decode disaggregation.
class VllmScheduler : public SchedulerBase, public PrefillRole, public DecodeRole {
 public:
  explicit VllmScheduler(SchedulerOptions options);
  std::string_view name() const override { return "vllm"; }
  void next_batch(SimTime now, KvCache& kv, Batch& batch) override;
  void release_handed_off(Request* request, KvCache& kv) override {
    release_transferred_kv(request, kv);
  }
  void accept_transferred(Request* request, SimTime /*now*/) override { join_running(request); }
};

}  // namespace servesim
