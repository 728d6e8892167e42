#include "schedulers/router/lookahead.hpp"

#include <algorithm>
#include <stdexcept>

namespace servesim {

Lookahead::Lookahead(const Fleet& fleet, const CostModel& cost_model, SimTime reanchor_ns,
                     bool sustained)
    : fleet_(fleet), cost_model_(cost_model), reanchor_ns_(reanchor_ns), sustained_(sustained) {
  for (const auto& r : fleet_) {
    if (dynamic_cast<const SarathiScheduler*>(r->scheduler.get()) == nullptr) {
      throw std::logic_error("the look-ahead estimator needs chunked-prefill schedulers");
    }
  }
}

Lookahead::Item Lookahead::item_of(const Request& r) {
  Item it;
  it.id = r.id;
  it.arrival = r.spec.arrival;
  it.prompt = r.spec.prompt_tokens;
  it.output = r.spec.output_tokens;
  it.computed = r.computed;
  it.generated = r.generated;
  return it;
}

void Lookahead::anchor(SimTime now, const std::vector<const Request*>& queue) {
  reps_.clear();
  for (const auto& r : fleet_) {
    Rep rep;
    rep.real = r.get();
    rep.scheduler = static_cast<const SarathiScheduler*>(r->scheduler.get());
    for (const Request* q : rep.scheduler->running()) {
      Item it = item_of(*q);
      if (r->busy && q->step_tokens > 0) {  // the step in flight, applied
        it.computed += q->step_tokens;
        if (it.computed == it.prompt + it.generated) ++it.generated;
      }
      if (it.generated >= it.output) continue;  // it finishes with the step in flight
      it.blocks = q->kv_blocks;
      rep.used_blocks += it.blocks;
      rep.running.push_back(it);
    }
    for (const Request* q : rep.scheduler->waiting()) rep.preempted.push_back(item_of(*q));
    rep.free_at = r->busy ? r->step_end : now;
    rep.last_start = r->busy ? rep.scheduler->step_start() : -1;
    rep.last_end = r->busy ? r->step_end : -1;
    reps_.push_back(std::move(rep));
  }
  queue_.clear();
  for (const Request* q : queue) queue_.push_back(item_of(*q));
  anchored_at_ = now;
  valid_ = true;
  drifted_ = false;
  ++anchorings_;
}

SimTime Lookahead::step(Rep& rep, bool admit, std::vector<Item>* admitted) {
  const SimTime now = rep.free_at;
  const SchedulerOptions& o = rep.scheduler->options();
  const KvCache& kv = rep.real->kv;
  const std::int64_t bs = kv.block_size();
  std::int32_t budget = rep.scheduler->token_budget();
  entries_.clear();
  shape_.clear();
  auto grow = [&](Item& it, std::int32_t tokens) {
    const std::int64_t need = (it.computed + tokens + bs - 1) / bs;
    if (need > it.blocks) {
      rep.used_blocks += need - it.blocks;
      it.blocks = need;
    }
  };
  // Decodes first, then the running prefills' next chunks (sarathi's order).
  for (std::size_t i = 0; i < rep.running.size() && budget > 0; ++i) {
    Item& it = rep.running[i];
    if (!it.decoding()) continue;
    grow(it, 1);
    shape_.decode_contexts.push_back(it.computed);
    entries_.emplace_back(i, 1);
    --budget;
  }
  for (std::size_t i = 0; i < rep.running.size() && budget > 0; ++i) {
    Item& it = rep.running[i];
    const std::int32_t pending = it.prompt + it.generated - it.computed;
    if (pending <= 0 || it.decoding()) continue;
    const std::int32_t chunk = std::min(pending, budget);
    grow(it, chunk);
    shape_.prefills.push_back(PrefillChunk{chunk, it.computed});
    entries_.emplace_back(i, chunk);
    budget -= chunk;
  }
  // New requests: the replica's preempted ones first, then the fleet queue, while the budget,
  // the seats and KV above the watermark allow.
  const bool back_to_back = o.async_scheduling && rep.last_end == now && rep.last_start >= 0;
  auto take_new = [&](SimTime cutoff) {
    while (admit && budget > 0 && static_cast<std::int32_t>(rep.running.size()) < o.max_num_seqs) {
      std::deque<Item>& src = !rep.preempted.empty() ? rep.preempted : queue_;
      if (src.empty() || src.front().arrival > cutoff) break;
      Item it = src.front();
      const std::int32_t chunk = std::min(it.prompt - it.computed, budget);
      const std::int64_t need = (it.computed + chunk + bs - 1) / bs;
      if (rep.used_blocks + need > kv.total_blocks() - kv.watermark_blocks()) break;
      it.blocks = need;
      rep.used_blocks += need;
      if (&src == &queue_ && admitted != nullptr) admitted->push_back(it);
      src.pop_front();
      shape_.prefills.push_back(PrefillChunk{chunk, it.computed});
      entries_.emplace_back(rep.running.size(), chunk);
      rep.running.push_back(it);
      budget -= chunk;
    }
  };
  take_new(back_to_back ? rep.last_start : now);
  if (entries_.empty() && back_to_back) take_new(now);  // an idle replica schedules at once
  if (entries_.empty()) {
    rep.free_at = kIdle;
    rep.last_start = -1;
    rep.last_end = now;  // idle since
    return 0;
  }
  const StepCost cost = cost_model_.step(shape_, rep.real->spec);
  const SimTime duration = cost.total_ns > 0 ? cost.total_ns : 1;
  ++steps_priced_;
  for (const auto& [i, tokens] : entries_) {
    Item& it = rep.running[i];
    it.computed += tokens;
    if (it.computed == it.prompt + it.generated) ++it.generated;
  }
  auto done = [&](const Item& it) {
    if (it.generated < it.output) return false;
    rep.used_blocks -= it.blocks;
    return true;
  };
  rep.running.erase(std::remove_if(rep.running.begin(), rep.running.end(), done),
                    rep.running.end());
  rep.last_start = now;
  rep.last_end = now + duration;
  rep.free_at = now + duration;
  return duration;
}

void Lookahead::withdraw(RequestId id) {
  const auto it =
      std::find_if(queue_.begin(), queue_.end(), [&](const Item& x) { return x.id == id; });
  if (it != queue_.end()) queue_.erase(it);
}

Lookahead::Estimate Lookahead::estimate(
    const Request& r, SimTime now, bool tail, bool queued_ahead,
    const std::function<void(std::vector<const Request*>&)>& queue_in_order) {
  if (!valid_ || !tail || (drifted_ && now - anchored_at_ >= reanchor_ns_)) {
    std::vector<const Request*> queue;
    queue_in_order(queue);
    anchor(now, queue);
  }
  for (Rep& rep : reps_) {
    if (rep.free_at == kIdle) rep.free_at = std::max(now, rep.last_end);
  }
  queue_.push_back(item_of(r));
  Estimate e;
  std::vector<Item> admitted;
  // A bound against a forecast that never admits it (it always does, unless a bug).
  for (std::int64_t guard = 0; guard < 100'000'000; ++guard) {
    std::size_t k = 0;
    for (std::size_t i = 1; i < reps_.size(); ++i) {
      if (reps_[i].free_at < reps_[k].free_at) k = i;
    }
    if (reps_[k].free_at == kIdle) return e;  // nothing left to run and r not admitted
    const Rep before = reps_[k];
    const SimTime start = reps_[k].free_at;
    admitted.clear();
    const SimTime duration = step(reps_[k], /*admit=*/true, &admitted);
    const bool in = std::any_of(admitted.begin(), admitted.end(),
                                [&](const Item& it) { return it.id == r.id; });
    if (!in) continue;
    // Keep the forecast from before this step: the next arrival, behind r, may join it.
    Rep after = std::move(reps_[k]);
    reps_[k] = before;
    for (auto it = admitted.rbegin(); it != admitted.rend(); ++it) queue_.push_front(*it);
    e.start = start;
    // r's own chunks until its first token, on a copy that admits no one else.
    auto mine = [&] {
      return std::find_if(after.running.begin(), after.running.end(),
                          [&](const Item& it) { return it.id == r.id; });
    };
    auto it = mine();
    for (SimTime d = duration; it != after.running.end() && it->generated == 0 && d > 0;) {
      d = step(after, /*admit=*/false, nullptr);
      it = mine();
    }
    e.first_token = after.last_end;
    e.finish = e.first_token;
    if (r.spec.output_tokens > 1) {
      // Its remaining tokens at the price of a step of the decodes running at its first token.
      shape_.clear();
      for (const Item& x : after.running) {
        if (x.decoding()) shape_.decode_contexts.push_back(x.computed);
      }
      if (shape_.decode_contexts.empty()) shape_.decode_contexts.push_back(r.spec.prompt_tokens);
      const auto left =
          static_cast<std::int32_t>(after.scheduler->token_budget() - shape_.num_decodes());
      if (sustained_ && queued_ahead && left > 0) shape_.prefills.push_back({left, 0});
      const SimTime decode =
          std::max<SimTime>(cost_model_.step(shape_, after.real->spec).total_ns, 1);
      ++steps_priced_;
      e.finish += static_cast<SimTime>(r.spec.output_tokens - 1) * decode;
    }
    return e;
  }
  return e;
}

}  // namespace servesim
