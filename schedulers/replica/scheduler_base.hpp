#pragma once

#include <algorithm>
#include <deque>
#include <vector>

#include "schedulers/replica/scheduler_options.hpp"
#include "sim/engine/replica_scheduler.hpp"

namespace servesim {

// Queues and bookkeeping shared by the iteration-level schedulers: a FCFS waiting queue
// (preempted requests re-enter at its front) and a running list in admission order.
// With `scheduler_recv_interval` n > 1 (SGLang's --scheduler-recv-interval, its
// SchedulerRecvSkipper) a busy replica takes in arrivals only every n steps: each finished step
// counts 1 when it only decoded (or verified drafts) and n when it computed any prompt tokens,
// and arrivals wait in an inbox until the count reaches n. An idle replica takes them at once
// (SGLang's idle loop counts its fast turns the same way).
// Invariants: a request is in at most one of waiting/running; every running request holds its
// KV blocks; waiting requests hold none. It serves no optional role itself: a kind that does
// derives from the role's interface and forwards to the helpers below.
class SchedulerBase : public ReplicaScheduler {
 public:
  explicit SchedulerBase(SchedulerOptions options) : options_(options) {}

  void enqueue(Request* request, SimTime now) override;
  void complete_batch(const Batch& batch, std::span<Request* const> finished, SimTime now,
                      KvCache& kv) override;
  std::int64_t num_outstanding() const override {
    return static_cast<std::int64_t>(inbox_.size() + waiting_.size() + running_.size());
  }
  std::int64_t num_running() const override { return static_cast<std::int64_t>(running_.size()); }
  std::int64_t prefill_backlog_tokens() const override;
  void decode_contexts(std::vector<std::int32_t>& decoding,
                       std::vector<std::int32_t>& later) const override;
  std::int32_t token_budget() const override { return options_.max_num_batched_tokens; }
  std::int32_t seat_limit() const override { return options_.max_num_seqs; }
  const SchedulerOptions& options() const { return options_; }
  bool attach_lora(LoraCache* cache) override {
    lora_ = cache;
    return true;
  }

 protected:
  // Without chunking a whole prompt must fit one iteration: an unset budget becomes vLLM V0's
  // default, max(max_model_len, 2048).
  void default_budget_to_whole_prompts();
  // Adds `tokens` of `r` to the batch being formed. Inline, as grow_or_preempt's fast path:
  // both run for every decode of every step.
  static void schedule(Batch& batch, Request* r, std::int32_t tokens) {
    r->step_tokens = tokens;
    batch.entries.push_back(BatchEntry{r, tokens, 0, r->computed, tokens == 1 && r->is_decode()});
  }
  // Tokens a decode step of r computes: 1 and, with speculative decoding, the draft tokens it
  // verifies (at most its remaining output less one, so its KV never passes its peak), within
  // `budget` (≥ 1) as vLLM truncates drafts to the token budget.
  std::int32_t decode_tokens(const Request* r, std::int32_t budget) const {
    if (options_.num_speculative_tokens == 0) return 1;
    const std::int32_t room = std::max(0, r->spec.output_tokens - r->generated - 1);
    return 1 + std::min({options_.num_speculative_tokens, room, budget - 1});
  }
  // Adds a decode of `tokens` (decode_tokens) of r to the batch.
  static void schedule_decode(Batch& batch, Request* r, std::int32_t tokens) {
    r->step_tokens = tokens;
    batch.entries.push_back(decode_entry(r, tokens));
  }
  // The entry of a decode of `tokens` (decode_tokens) of r.
  static BatchEntry decode_entry(Request* r, std::int32_t tokens) {
    return BatchEntry{r, tokens, tokens - 1, r->computed, tokens == 1 && r->is_decode()};
  }
  // After a speculative step: frees the KV slots of r's rejected draft tokens.
  virtual void rewind_rejected(Request* r, KvCache& kv) { kv.shrink(r->kv_blocks, r->computed); }
  // Adds a prompt chunk of `tokens` of r and, with prefix caching, publishes the full blocks of
  // r's shared prefix that this step computes, so a request admitted later in the same step
  // already hits them (vLLM V1 caches a block's hash when it allocates it, before the forward
  // pass; the KV is written layer by layer before any attention reads it).
  static void schedule_prefill(Batch& batch, Request* r, std::int32_t tokens, KvCache& kv);
  // Where a request re-enters the waiting queue after a preemption: at the front (vLLM).
  virtual void requeue(Request* r) { waiting_.push_front(r); }
  // Recompute preemption: frees r's KV, forgets its computed tokens and puts it back in the
  // waiting queue (requeue: at the front). If r was already scheduled in `batch`, its entry is
  // removed.
  void preempt(Request* r, KvCache& kv, Batch& batch);
  // Grows r's KV to cover computed + tokens, preempting running requests from the tail (newest
  // first) while blocks are short. Returns false if r itself had to be preempted.
  bool grow_or_preempt(Request* r, std::int32_t tokens, KvCache& kv, Batch& batch) {
    return kv.grow(r->kv_blocks, static_cast<std::int64_t>(r->computed) + tokens) ||
           preempt_until_grown(r, tokens, kv, batch);
  }
  // grow_or_preempt's slow path, once the blocks r holds are found short.
  bool preempt_until_grown(Request* r, std::int32_t tokens, KvCache& kv, Batch& batch);
  // Moves the head of the waiting queue to the running list.
  void admit_head();
  // Admits the head of the waiting queue with a first chunk of up to `budget` tokens (the whole
  // remaining prompt when `whole`): reuses its cached prefix blocks (prefix caching), allocates
  // KV above the watermark, moves it to running and schedules it. False (nothing changed) when
  // the blocks are short or, with `whole`, the prompt exceeds the budget.
  // With LoRA, the head is first the earliest waiting request whose adapter gets a slot
  // (lora_ready_front), and admitting it pins its adapter.
  bool admit_head_into(Batch& batch, KvCache& kv, std::int32_t budget, bool whole) {
    return lora_ == nullptr ? admit_front_into(batch, kv, budget, whole)
                            : admit_lora_into(batch, kv, budget, whole);
  }
  // Multi-LoRA (schedulers/replica/scheduler_base_lora.cpp). As vLLM does, a waiting request
  // whose adapter finds no GPU slot is passed over and the next one tried, the ones passed over
  // keeping their places: lora_ready_front moves the earliest waiting request that can be
  // admitted (base model, adapter on the GPU, or a slot to load it into) to the front and returns
  // false when none can; lora_restore_front puts it back where it was.
  bool lora_ready_front();
  void lora_restore_front();
  // Pins r's adapter on its admission and adds the load to the batch.
  void lora_admitted(const Request* r, Batch& batch) {
    if (r->spec.adapter >= 0) batch.lora_load_ns += lora_->acquire(r->spec.adapter);
  }
  // Unpins r's adapter when it leaves the running list (finished or preempted).
  void lora_left(const Request* r) {
    if (lora_ != nullptr && r->spec.adapter >= 0) lora_->release(r->spec.adapter);
  }
  // What PrefillRole::release_handed_off and DecodeRole::accept_transferred do, for the kinds
  // that serve those roles.
  void release_transferred_kv(Request* r, KvCache& kv) { free_kv(r, kv); }
  void join_running(Request* r) { running_.push_back(r); }
  // Frees every KV block of r (private ones, and its references on shared prefix blocks).
  static void free_kv(Request* r, KvCache& kv);
  // What complete_batch does with a finished request's KV: frees it (a scheduler that forms its
  // next batch before it learns of the finish holds it a while longer).
  virtual void release_finished(Request* r, KvCache& kv) { free_kv(r, kv); }
  // The KV keys of r's blocks (its group's shared prefix, then its own content).
  static BlockKeys keys_of(const Request& r, std::int32_t block_size);
  // A finished request whose hashes cover its output (RequestSpec::hashes_cover_output) publishes
  // every full block it computed, the reply's included, before its KV is freed (no-op without
  // prefix caching).
  static void publish_reply(Request* r, KvCache& kv);

  SchedulerOptions options_;
  std::deque<Request*> waiting_;
  std::vector<Request*> running_;
  LoraCache* lora_ = nullptr;  // null without LoRA

 private:
  bool admit_front_into(Batch& batch, KvCache& kv, std::int32_t budget, bool whole);
  bool admit_lora_into(Batch& batch, KvCache& kv, std::int32_t budget, bool whole);
  std::size_t lora_moved_from_ = 0;  // where lora_ready_front took the front from
  std::vector<Request*> inbox_;      // arrivals not yet taken in (scheduler_recv_interval)
  std::int32_t recv_count_ = 0;
  void take_in_arrivals();
};

}  // namespace servesim
