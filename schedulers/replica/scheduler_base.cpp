#include "schedulers/replica/scheduler_base.hpp"

#include <algorithm>
#include <stdexcept>

namespace servesim {

void SchedulerBase::enqueue(Request* request, SimTime /*now*/) {
  const bool busy = !waiting_.empty() || !running_.empty();
  if (options_.scheduler_recv_interval > 1 && busy) {
    inbox_.push_back(request);
  } else {
    waiting_.push_back(request);
  }
}

void SchedulerBase::take_in_arrivals() {
  recv_count_ = 0;
  waiting_.insert(waiting_.end(), inbox_.begin(), inbox_.end());
  inbox_.clear();
}

void SchedulerBase::default_budget_to_whole_prompts() {
  if (options_.max_num_batched_tokens <= 0) {
    options_.max_num_batched_tokens = std::max(options_.max_model_len, 2048);
  }
}

namespace {
// The request's shared-prefix tokens (0 without a group).
std::int64_t group_prefix_tokens(const Request& r) {
  return r.spec.prefix_group >= 0 || r.spec.hashes
             ? std::min(r.spec.prefix_tokens, r.spec.prompt_tokens)
             : 0;
}

// Leading blocks of r that may come from the cache: full blocks of its shared prefix and, once
// it was preempted, of its own earlier computation; never the whole sequence (vLLM recomputes
// at least the last token to produce logits).
std::int64_t cacheable_prefix_blocks(const Request& r, std::int32_t block_size) {
  const std::int64_t last = static_cast<std::int64_t>(r.target_tokens()) - 1;
  const std::int64_t tokens = r.preemptions > 0 ? last : std::min(group_prefix_tokens(r), last);
  return tokens > 0 ? tokens / block_size : 0;
}
}  // namespace

void SchedulerBase::schedule_prefill(Batch& batch, Request* r, std::int32_t tokens, KvCache& kv) {
  schedule(batch, r, tokens);
  if (kv.prefix_caching() && (r->spec.prefix_group >= 0 || r->spec.hashes)) {
    const std::int64_t blocks =
        std::min<std::int64_t>(static_cast<std::int64_t>(r->computed) + tokens,
                               group_prefix_tokens(*r)) /
        kv.block_size();
    kv.publish_prefix(keys_of(*r, kv.block_size()), blocks, r->kv_blocks, r->kv_shared);
  }
}

void SchedulerBase::preempt(Request* r, KvCache& kv, Batch& batch) {
  if (r->step_tokens > 0) {
    auto& e = batch.entries;
    e.erase(std::remove_if(e.begin(), e.end(), [r](const BatchEntry& x) { return x.request == r; }),
            e.end());
    r->step_tokens = 0;
  }
  // vLLM hashes every full block it computed: freed, they stay cached (evictable), and the
  // request finds whatever survives when it resumes.
  if (kv.prefix_caching()) {
    kv.publish_prefix(keys_of(*r, kv.block_size()), r->computed / kv.block_size(), r->kv_blocks,
                      r->kv_shared);
  }
  // With a CPU tier and no prefix caching, its computed KV is swapped out and comes back when it
  // resumes (admit_head_into); without room there, it recomputes. (With prefix caching its
  // published blocks reach the tier when the GPU evicts them.)
  bool swapped = false;
  if (KvOffload* tier = kv.offload(); tier != nullptr && !kv.prefix_caching() && r->computed > 0) {
    swapped = tier->swap_out(r->id, kv.blocks_for_tokens(r->computed));
    if (!swapped) tier->count_recompute();
  }
  free_kv(r, kv);
  lora_left(r);
  if (!swapped) r->computed = 0;
  ++r->preemptions;
  ++batch.preempted;
  running_.erase(std::find(running_.begin(), running_.end(), r));
  requeue(r);
}

bool SchedulerBase::preempt_until_grown(Request* r, std::int32_t tokens, KvCache& kv,
                                        Batch& batch) {
  while (!kv.grow(r->kv_blocks, static_cast<std::int64_t>(r->computed) + tokens)) {
    // The newest running request not computing in a step in flight (pipeline parallelism).
    auto it = std::find_if(running_.rbegin(), running_.rend(),
                           [](const Request* q) { return !q->in_flight; });
    if (it == running_.rend()) return false;  // r itself is in flight: cannot happen
    Request* victim = *it;
    preempt(victim, kv, batch);
    if (victim == r) return false;
  }
  return true;
}

void SchedulerBase::admit_head() {
  running_.push_back(waiting_.front());
  waiting_.pop_front();
}

bool SchedulerBase::admit_front_into(Batch& batch, KvCache& kv, std::int32_t budget, bool whole) {
  Request* r = waiting_.front();
  std::int64_t hits = 0;
  std::int64_t queried = 0;
  BlockKeys keys;
  if (kv.prefix_caching() && r->kv_blocks == 0) {
    queried = cacheable_prefix_blocks(*r, kv.block_size());
    keys = keys_of(*r, kv.block_size());
    hits = kv.cached_prefix(keys, queried);
  }
  const std::int64_t computed = hits > 0 ? hits * kv.block_size() : r->computed;
  const auto pending = static_cast<std::int32_t>(r->target_tokens() - computed);
  const std::int32_t chunk = std::min(pending, budget);
  // Decided before anything is taken, as vLLM V1 does: a request that cannot be admitted leaves
  // the cached blocks it would hit where they wait in the free queue.
  if ((whole && pending > budget) ||
      !kv.can_admit(keys, hits, r->kv_blocks, computed + chunk, /*keep_watermark=*/true)) {
    return false;
  }
  // can_admit said both fit; a failure here is a bug in the accounting, not a full cache.
  if (hits > 0) {
    if (!kv.acquire_prefix(keys, hits, r->kv_blocks, r->kv_shared, /*keep_watermark=*/true)) {
      throw std::logic_error("admission: cached blocks can_admit allowed could not be taken");
    }
    r->computed = static_cast<std::int32_t>(computed);
  }
  if (!kv.grow(r->kv_blocks, computed + chunk, /*keep_watermark=*/true)) {
    throw std::logic_error("admission: blocks can_admit allowed could not be allocated");
  }
  if (KvOffload* tier = kv.offload();
      tier != nullptr && r->preemptions > 0 && !kv.prefix_caching()) {
    tier->swap_in(r->id);  // its swapped blocks (if any), loaded in this step
  }
  kv.record_prefix_lookup(queried, hits);
  r->cached_prefix = static_cast<std::int32_t>(hits * kv.block_size());
  admit_head();
  schedule_prefill(batch, r, chunk, kv);
  return true;
}

// Block i of r: its group's prefix block, then its own content.
BlockKeys SchedulerBase::keys_of(const Request& r, std::int32_t block_size) {
  if (r.spec.hashes) {
    // Hashes over the reply key its blocks too (they never widen what admission may take: that
    // is capped at the prompt prefix by cacheable_prefix_blocks); never past the chain's end.
    const std::int64_t hashed =
        r.spec.hashes_cover_output
            ? std::min(std::int64_t{r.spec.prompt_tokens} + std::int64_t{r.spec.output_tokens},
                       static_cast<std::int64_t>(r.spec.hashes->chain.size()) *
                           r.spec.hashes->block_tokens)
            : group_prefix_tokens(r);
    return BlockKeys::hashed(r.spec.hashes, hashed, block_size, BlockKeys::own_id(r.id));
  }
  return BlockKeys(r.spec.prefix_group, group_prefix_tokens(r) / block_size,
                   BlockKeys::own_id(r.id));
}

void SchedulerBase::publish_reply(Request* r, KvCache& kv) {
  kv.publish_prefix(keys_of(*r, kv.block_size()), r->computed / kv.block_size(), r->kv_blocks,
                    r->kv_shared);
}

void SchedulerBase::free_kv(Request* r, KvCache& kv) {
  kv.release(r->kv_blocks, r->kv_shared, keys_of(*r, kv.block_size()));
}

void SchedulerBase::complete_batch(const Batch& batch, std::span<Request* const> finished,
                                   SimTime /*now*/, KvCache& kv) {
  if (options_.num_speculative_tokens > 0) {
    for (const BatchEntry& e : batch.entries) {
      if (e.draft_tokens > 0 && !e.request->done()) rewind_rejected(e.request, kv);
    }
  }
  if (options_.scheduler_recv_interval > 1) {
    const bool prompt = std::any_of(batch.entries.begin(), batch.entries.end(), [](const auto& e) {
      return e.context < e.request->spec.prompt_tokens;
    });
    recv_count_ += prompt ? options_.scheduler_recv_interval : 1;
    if (recv_count_ >= options_.scheduler_recv_interval) take_in_arrivals();
  }
  if (finished.empty()) return;  // most steps: nothing to retire
  // Its published prefix blocks stay cached when freed (as in vLLM); a hand-off keeps its KV
  // until it is sent.
  for (Request* r : finished) {
    if (r->spec.hashes_cover_output) publish_reply(r, kv);
    if (!r->hand_off) release_finished(r, kv);
    lora_left(r);
  }
  running_.erase(
      std::remove_if(running_.begin(), running_.end(), [](const Request* r) { return r->done(); }),
      running_.end());
  if (running_.empty() && waiting_.empty() && !inbox_.empty()) take_in_arrivals();
}

std::int64_t SchedulerBase::prefill_backlog_tokens() const {
  std::int64_t tokens = 0;
  auto add = [&tokens](const Request* r) {
    if (!r->is_decode()) tokens += r->pending_tokens() - r->step_tokens;  // less the step in flight
  };
  for (const Request* r : inbox_) add(r);
  for (const Request* r : waiting_) add(r);
  for (const Request* r : running_) add(r);
  return tokens;
}

void SchedulerBase::decode_contexts(std::vector<std::int32_t>& decoding,
                                    std::vector<std::int32_t>& later) const {
  for (const Request* r : running_)
    (r->is_decode() ? decoding : later).push_back(r->target_tokens());
  for (const Request* r : inbox_) later.push_back(r->target_tokens());
  for (const Request* r : waiting_) later.push_back(r->target_tokens());
}

}  // namespace servesim
