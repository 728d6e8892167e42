#include "schedulers/replica/sarathi_scheduler.hpp"

#include <algorithm>

namespace servesim {

SarathiScheduler::SarathiScheduler(SchedulerOptions options) : SchedulerBase(options) {
  if (options_.max_num_batched_tokens <= 0) options_.max_num_batched_tokens = 512;
}

void SarathiScheduler::complete_batch(const Batch& batch, std::span<Request* const> finished,
                                      SimTime now, KvCache& kv) {
  SchedulerBase::complete_batch(batch, finished, now, kv);
  last_end_ = now;
}

void SarathiScheduler::release_finished(Request* r, KvCache& kv) {
  if (!options_.async_scheduling) {
    free_kv(r, kv);
    return;
  }
  finished_kv_.push_back({r->kv_blocks, r->kv_shared, keys_of(*r, kv.block_size())});
  r->kv_blocks = 0;  // the request leaves; its blocks are the scheduler's until released
  r->kv_shared = 0;
}

void SarathiScheduler::release_deferred(KvCache& kv) {
  for (Finished& f : finished_kv_) kv.release(f.held, f.shared, f.keys);
  finished_kv_.clear();
}

void SarathiScheduler::admit(SimTime now, SimTime cutoff, KvCache& kv, Batch& batch,
                             std::int32_t budget) {
  // Requests finished in the step in flight still hold their seats (async scheduling).
  const auto seats_taken = [&] {
    return static_cast<std::int32_t>(running_.size() + finished_kv_.size());
  };
  const auto fits = [&](const Request& r) {
    return static_cast<std::int64_t>(r.spec.prompt_tokens) + r.spec.output_tokens <=
               options_.max_model_len &&
           kv.can_ever_fit(r.spec.peak_kv_tokens());
  };
  while (budget > 0 && seats_taken() < options_.max_num_seqs) {
    if (!waiting_.empty() && waiting_.front()->spec.arrival <= cutoff) {
      if (!admit_head_into(batch, kv, budget, /*whole=*/false)) {
        if (!make_room_for(waiting_.front(), kv, batch)) break;
        budget = options_.max_num_batched_tokens;  // the victim's tokens left the batch
        for (const auto& e : batch.entries) budget -= e.tokens;
        continue;
      }
    } else {
      Request* r = queue_ != nullptr ? queue_->next_for(self_, now, cutoff, fits) : nullptr;
      if (r == nullptr) break;
      waiting_.push_front(r);
      if (!admit_head_into(batch, kv, budget, /*whole=*/false)) {
        waiting_.pop_front();  // it stays in the fleet queue, for this replica or another
        break;
      }
      queue_->take(r, self_, now);
      r->replica = self_;
    }
    budget -= batch.entries.back().tokens;
  }
}

template <bool kSpeculative>
SarathiScheduler::DecodePass SarathiScheduler::schedule_decodes(KvCache& kv, Batch& batch,
                                                                std::int32_t budget) {
  // Iterate by index: preemption removes from the tail. Step 2 starts at the first request this
  // pass passed over, when it saw them all (preemption only removes requests behind the one
  // being scheduled, so that index stays valid).
  std::size_t partial_from = 0;
  bool partial_seen = false;
  std::size_t seen = 0;
  // The running list and the batch are read and written through locals, refreshed only where a
  // preemption changed them: the batch gets unwritten room for every running request, its entries
  // are written in place and the vector is cut to them after (a push_back per decode would reload
  // the vector's end after every store).
  Request* const* running = running_.data();
  std::size_t size = running_.size();
  auto& entries = batch.entries;
  std::size_t used = entries.size();
  entries.resize(used + size, boost::container::default_init);
  BatchEntry* out = entries.data();
  const std::int64_t block_size = kv.block_size();
  for (; seen < size && budget > 0; ++seen) {
    Request* r = running[seen];
    if (r->step_tokens > 0) continue;
    if (!r->is_decode()) {
      if (!partial_seen) partial_from = seen;
      partial_seen = true;
      continue;
    }
    const std::int32_t tokens = kSpeculative ? decode_tokens(r, budget) : 1;
    const std::int64_t need = static_cast<std::int64_t>(r->computed) + tokens;
    // The blocks r holds cover the step (most decodes), else it grows, or preempts for room.
    if (need > r->kv_blocks * block_size && !kv.grow(r->kv_blocks, need)) {
      entries.resize(used);  // preemption takes entries out of the batch
      const bool grown = preempt_until_grown(r, tokens, kv, batch);
      running = running_.data();
      size = running_.size();
      used = entries.size();
      entries.resize(used + (size > seen ? size - seen : 0), boost::container::default_init);
      out = entries.data();
      if (!grown) break;  // r itself was the tail: nothing older left
    }
    r->step_tokens = tokens;
    out[used++] = kSpeculative ? decode_entry(r, tokens) : BatchEntry{r, 1, 0, r->computed, true};
    budget -= tokens;
  }
  entries.resize(used);
  if (seen == running_.size() && !partial_seen) partial_from = seen;  // none for step 2
  return {partial_from, budget};
}

void SarathiScheduler::next_batch(SimTime now, KvCache& kv, Batch& batch) {
  // 1. Decodes, oldest first.
  const DecodePass decodes =
      options_.num_speculative_tokens > 0
          ? schedule_decodes<true>(kv, batch, options_.max_num_batched_tokens)
          : schedule_decodes<false>(kv, batch, options_.max_num_batched_tokens);
  std::int32_t budget = decodes.budget;
  const std::size_t partial_from = decodes.partial_from;
  // 2. Ongoing partial prefills (including recomputes admitted earlier), oldest first.
  for (std::size_t i = partial_from; i < running_.size() && budget > 0; ++i) {
    Request* r = running_[i];
    if (r->is_decode() || r->step_tokens > 0) continue;
    const std::int32_t chunk = std::min(r->pending_tokens(), budget);
    if (!grow_or_preempt(r, chunk, kv, batch)) break;
    schedule_prefill(batch, r, chunk, kv);
    budget -= chunk;
  }
  // 3. New (or preempted) requests, FCFS, while blocks above the watermark and seats allow. As in
  // vLLM V1, no request is admitted in an iteration that had to preempt. With async scheduling
  // a batch that directly follows a step was decided when that step started.
  const bool back_to_back = options_.async_scheduling && last_end_ == now && last_start_ >= 0;
  // Without a preemption every token scheduled so far is off the budget and still in the batch.
  if (batch.preempted == 0) admit(now, back_to_back ? last_start_ : now, kv, batch, budget);
  // The step in flight's output is processed now: its finished requests free their KV.
  release_deferred(kv);
  // Nothing in flight would have been decided earlier: an idle replica schedules at once.
  // With async scheduling, requests finished in the step in flight may have held so much KV that
  // the running ones preempted one another down to none: vLLM then schedules again at once, with
  // that KV free.
  if (batch.entries.empty() && (batch.preempted > 0 || back_to_back)) {
    admit(now, now, kv, batch, options_.max_num_batched_tokens);
  }
  last_start_ = batch.entries.empty() ? -1 : now;
}

}  // namespace servesim
