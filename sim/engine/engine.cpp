#include "sim/engine/engine.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace servesim {

Engine::Engine(EngineParts parts)
    : fleet_(parts.fleet),
      router_(parts.router),
      workload_(parts.workload),
      cost_model_(parts.cost_model),
      observers_(std::move(parts.observers)),
      progress_(std::move(parts.progress)),
      stop_(parts.stop),
      slo_(parts.slo),
      slo_overhead_ns_(parts.slo_overhead_ns),
      slo_seed_(parts.slo_seed),
      speculation_(parts.speculation) {
  if (fleet_.empty()) throw std::invalid_argument("Engine needs at least one replica");
  router_.attach(fleet_, cost_model_);
  loop_ = workload_.closed_loop();
  for (auto& r : fleet_) {
    r->idle_w = cost_model_.idle_power_w(r->spec);
    fleet_power_w_ += r->idle_w;
  }
  if (FleetQueue* q = router_.queue()) {
    for (auto& r : fleet_) {
      if (r->role == ReplicaRole::kDecode) continue;
      auto* puller = dynamic_cast<FleetQueuePuller*>(r->scheduler.get());
      if (puller == nullptr) {
        throw std::invalid_argument(fmt::format(
            "router '{}' holds requests in a fleet-level queue, but scheduler '{}' of replica {} "
            "cannot pull from one",
            router_.name(), r->scheduler->name(), r->id));
      }
      puller->attach_queue(q, r->id);
    }
  }
  if ((parts.decode_router == nullptr) != (parts.cluster == nullptr)) {
    throw std::invalid_argument("disaggregation needs both a decode router and a cluster");
  }
  if (parts.decode_router != nullptr) set_disaggregation(*parts.decode_router, *parts.cluster);
  if (parts.autoscaler != nullptr) set_autoscaler(parts.autoscaler);
}

bool Engine::can_ever_hold(const Replica& replica, const RequestSpec& spec) {
  // max_model_len bounds the sequence, prompt + output; the KV peaks one token lower.
  const std::int64_t total = static_cast<std::int64_t>(spec.prompt_tokens) + spec.output_tokens;
  return total <= replica.max_model_len && replica.kv.can_ever_fit(spec.peak_kv_tokens());
}

Request* Engine::allocate() {
  if (!free_.empty()) {
    Request* r = free_.back();
    free_.pop_back();
    *r = Request{};
    return r;
  }
  pool_.emplace_back();
  return &pool_.back();
}

void Engine::release(Request* r) { free_.push_back(r); }

EngineTotals Engine::run() {
  pending_ = workload_.next();
  if (pending_) {
    totals_.first_arrival = pending_->arrival;
    last_arrival_ = pending_->arrival;
    queue_.push(pending_->arrival, kArrival, 0);
  }
  if (autoscaler_ != nullptr) {
    index_routable();  // the largest request every replica can hold; the routable ones follow
    routable_ = autoscaler_->active();
    router_.on_routable(fleet_, routable_);
    queue_.push(autoscaler_->config().interval, kAutoscale, 0);
  }
  std::int64_t events = 0;
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    if (e.kind == kTransfer && e.target != network_version_) continue;  // rescheduled since
    if (e.kind >= kAutoscale) {  // the fleet's size changes; the run's end does not move
      if (e.kind == kAutoscale) {
        on_autoscale(e.time);
      } else {
        on_provisioned(static_cast<ReplicaId>(e.target), e.time);
      }
      continue;
    }
    totals_.end_time = e.time;
    if (e.kind == kArrival) {
      on_arrivals(e.time);
    } else if (e.kind == kTransfer) {
      on_transfers(e.time);
    } else if (e.kind == kStageFree) {
      try_start(*fleet_[static_cast<std::size_t>(e.target)], e.time);
    } else {
      on_step_end(*fleet_[static_cast<std::size_t>(e.target)], e.time);
    }
    if (progress_ && (++events & 0xFFFF) == 0) progress_(totals_, e.time);
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) {
      totals_.complete = false;
      totals_.peak_power_w = std::max(totals_.peak_power_w, fleet_power_w_);
      if (autoscaler_ != nullptr) autoscaler_->finish(fleet_, totals_.end_time, totals_.arrived);
      if (progress_) progress_(totals_, totals_.end_time);
      return totals_;
    }
  }
  if (autoscaler_ != nullptr) autoscaler_->finish(fleet_, totals_.end_time, totals_.arrived);
  if (totals_.arrived != totals_.finished + totals_.rejected) {
    throw std::logic_error(fmt::format(
        "simulation stalled: {} requests arrived, {} finished, {} rejected, {} waiting for a "
        "decode replica (a scheduler left requests waiting with no step in flight)",
        totals_.arrived, totals_.finished, totals_.rejected, handoffs_.size()));
  }
  for (const auto& r : fleet_) {
    if (r->kv.used_blocks() != 0) {
      throw std::logic_error(
          fmt::format("replica {} ended with {} KV blocks still held", r->id, r->kv.used_blocks()));
    }
  }
  if (progress_) progress_(totals_, totals_.end_time);
  totals_.peak_power_w = std::max(totals_.peak_power_w, fleet_power_w_);
  return totals_;
}

void Engine::on_arrivals(SimTime now) {
  // A closed-loop workload's arrival event may be stale: its request was handed back and an
  // earlier one taken (refill_arrival); the event for the held one is in the queue.
  if (loop_ != nullptr && (!pending_ || pending_->arrival != now)) return;
  // Admit every request that arrives at this instant before any replica forms a batch.
  while (pending_ && pending_->arrival == now) {
    const ReplicaId id = admit(*pending_, now);
    if (id == kQueued) {
      any_queued_ = true;
    } else if (id != kRefused) {
      touched_.push_back(id);
    }
    pending_ = workload_.next();
    if (pending_ && pending_->arrival < last_arrival_) {
      throw std::logic_error(fmt::format("workload '{}' yielded arrivals out of order ({} < {} ns)",
                                         workload_.name(), pending_->arrival, last_arrival_));
    }
    if (pending_) last_arrival_ = pending_->arrival;
  }
  if (pending_) queue_.push(pending_->arrival, kArrival, 0);
  // Only a replica that got work can start a step now (the rest were tried when their own state
  // last changed), unless the router holds requests any idle replica may pull: then all, as
  // before. In fleet order either way, so equal-time events keep their order.
  if (any_queued_) {
    for (auto& replica : fleet_) try_start(*replica, now);  // no-op while its stages are taken
  } else {
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    for (const ReplicaId id : touched_) try_start(*fleet_[static_cast<std::size_t>(id)], now);
  }
  touched_.clear();
  any_queued_ = false;
}

void Engine::refill_arrival(SimTime now) {
  const SimTime held = pending_ ? pending_->arrival : -1;
  if (pending_) loop_->give_back(std::move(*pending_));
  pending_ = workload_.next();
  if (!pending_) return;
  if (pending_->arrival < now) {
    throw std::logic_error(fmt::format("workload '{}' yielded an arrival in the past ({} < {} ns)",
                                       workload_.name(), pending_->arrival, now));
  }
  last_arrival_ = pending_->arrival;
  if (pending_->arrival != held) queue_.push(pending_->arrival, kArrival, 0);
}

ReplicaId Engine::admit(const RequestSpec& spec, SimTime now) {
  Request* r = allocate();
  r->id = next_id_++;
  r->spec = spec;
  ++totals_.arrived;
  if (slo_ != nullptr && slo_->any()) {
    if (r->spec.slo_class < 0) {
      r->spec.slo_class = slo_->classify(r->spec, SloPolicy::draw(slo_seed_, r->id));
    }
    r->deadline = slo_->deadline(r->spec.slo_class, spec.arrival, slo_overhead_ns_);
    r->deadline_ttft = slo_->deadline_is_ttft(r->spec.slo_class);
  }
  const auto fits = [&](const Replica& replica) { return can_ever_hold(replica, spec); };
  if (routable_.empty()) index_routable();
  const std::vector<ReplicaId>* eligible = &routable_;
  if (static_cast<std::int64_t>(spec.prompt_tokens) + spec.output_tokens > routable_max_len_ ||
      spec.peak_kv_tokens() > routable_max_kv_tokens_) {
    eligible_.clear();  // it does not fit everywhere: the replicas that can hold it
    for (const auto& replica : fleet_) {
      if (autoscaler_ != nullptr && !autoscaler_->is_active(replica->id)) continue;
      if (replica->role != ReplicaRole::kDecode && fits(*replica)) eligible_.push_back(replica->id);
    }
    eligible = &eligible_;
  }
  if (decode_router_ != nullptr && spec.output_tokens > 1) {
    // It decodes elsewhere: some decode replica must be able to hold it too.
    r->hand_off = true;
    if (std::none_of(fleet_.begin(), fleet_.end(), [&](const auto& replica) {
          return replica->role == ReplicaRole::kDecode && fits(*replica);
        })) {
      eligible_.clear();
      eligible = &eligible_;
    }
  }
  if (eligible->empty()) r->reject_reason = RejectReason::kFitsNoReplica;
  const ReplicaId id = eligible->empty() ? kRefused : router_.route(*r, fleet_, *eligible, now);
  if (id == kRefused) {
    if (r->reject_reason == RejectReason::kNone) {
      throw std::logic_error(
          fmt::format("router '{}' refused a request without a reason", router_.name()));
    }
    ++totals_.rejected;
    for (auto* o : observers_) o->on_request_done(*r, /*rejected=*/true);
    // on_arrivals pulls the next arrival after this, so what the workload makes now is seen.
    if (loop_ != nullptr) loop_->on_request_done(r->spec, now, /*rejected=*/true);
    release(r);
    return kRefused;
  }
  if (id == kQueued) return kQueued;  // the router holds it; a replica pulls it for a batch
  if (autoscaler_ != nullptr && !autoscaler_->is_active(id)) {
    throw std::logic_error(
        fmt::format("router '{}' returned replica {}, which is not active", router_.name(), id));
  }
  r->replica = id;
  Replica& replica = *fleet_[static_cast<std::size_t>(id)];
  replica.scheduler->enqueue(r, now);
  router_.on_replica_update(replica);
  return id;
}

void Engine::index_routable() {
  routable_max_len_ = std::numeric_limits<std::int64_t>::max();
  routable_max_kv_tokens_ = std::numeric_limits<std::int64_t>::max();
  for (const auto& replica : fleet_) {
    if (replica->role == ReplicaRole::kDecode) continue;
    routable_.push_back(replica->id);
    routable_max_len_ = std::min<std::int64_t>(routable_max_len_, replica->max_model_len);
    // The most KV tokens that can ever fit: can_ever_fit's bound in whole blocks.
    const KvCache& kv = replica->kv;
    routable_max_kv_tokens_ =
        std::min(routable_max_kv_tokens_,
                 (kv.total_blocks() - kv.watermark_blocks()) * std::int64_t{kv.block_size()});
  }
  if (routable_.empty()) routable_max_len_ = routable_max_kv_tokens_ = 0;
  router_.on_routable(fleet_, routable_);
}

void Engine::set_step_power(Replica& replica, double watts, SimTime now) {
  if (now != power_changed_at_) {  // the power of the instant before holds until now
    totals_.peak_power_w = std::max(totals_.peak_power_w, fleet_power_w_);
    power_changed_at_ = now;
  }
  fleet_power_w_ += watts - replica.step_power_w;
  replica.step_power_w = watts;
}

void Engine::try_start(Replica& replica, SimTime now) {
  if (static_cast<int>(replica.in_flight.size()) >= replica.max_in_flight) return;
  if (now < replica.stage_free) return;  // its kStageFree event comes
  replica.batch.clear();
  replica.scheduler->next_batch(now, replica.kv, replica.batch);
  if (replica.batch.empty()) {
    replica.busy = !replica.in_flight.empty();
    totals_.preemptions += replica.batch.preempted;
    router_.on_replica_update(replica);  // preemptions freed KV
    return;
  }
  // The step's shape, and its requests marked in flight, in one pass over the batch.
  shape_.clear();
  std::int32_t prefill_tokens = 0;
  std::int32_t verifies = 0;
  // Decode contexts are written in place (at most one per entry) and the vector cut to them after.
  shape_.decode_contexts.resize(replica.batch.entries.size());
  std::int32_t* const contexts = shape_.decode_contexts.data();
  std::size_t decodes = 0;
  // Only a replica that keeps several steps in flight forms a batch while one is in flight; on
  // any other, no scheduler can see a plain decode's in-flight mark, and it is left unset.
  const bool pipelined = replica.max_in_flight > 1;
  for (const auto& entry : replica.batch.entries) {
    if (entry.decode) {
      contexts[decodes++] = entry.context;  // it has a token: it was scheduled before
      if (pipelined) entry.request->in_flight = true;
      continue;
    }
    Request& r = *entry.request;
    if (entry.draft_tokens > 0) {
      // A decode that verifies drafts: a chunk of 1 + drafts query tokens after its context.
      if (verifies++ == 0) drafts_.clear();
      shape_.prefills.push_back(PrefillChunk{entry.tokens, r.computed});
      drafts_.push_back(DraftSlot{r.computed, entry.draft_tokens});
    } else {
      shape_.prefills.push_back(PrefillChunk{entry.tokens, r.computed});
      // The drafter reads real prefill chunks too (cleared where the step is priced).
      if (speculation_ != nullptr) draft_prefills_.push_back(shape_.prefills.back());
      prefill_tokens += entry.tokens;
      if (r.first_scheduled < 0) r.first_scheduled = now;
    }
    r.in_flight = true;
  }
  shape_.decode_contexts.resize(decodes);
  if (replica.lora != nullptr) {  // multi-LoRA: the step's adapters, for the cost model
    collect_lora_slices(replica.batch, shape_.lora);
    replica.lora->record_step(static_cast<std::int32_t>(shape_.lora.size()));
  }
  StepCost cost;
  if (speculation_ == nullptr) {
    if (verifies > 0) {
      throw std::logic_error("a scheduler verified draft tokens in a run without speculation");
    }
    cost = cost_model_.step(shape_, replica.spec);
  } else {
    cost = verifies == 0 && draft_prefills_.empty()
               ? cost_model_.step(shape_, replica.spec)
               : speculation_->step(
                     cost_model_, shape_,
                     std::span<const DraftSlot>(drafts_.data(), static_cast<std::size_t>(verifies)),
                     draft_prefills_, replica.spec);
    draft_prefills_.clear();
  }
  // Adapter loads are synchronous: the step waits for them.
  if (replica.lora != nullptr) cost.total_ns += replica.batch.lora_load_ns;
  SimTime duration = cost.total_ns > 0 ? cost.total_ns : 1;
  if (KvOffload* tier = replica.kv.offload()) {
    // KV the step loads from the CPU tier is on its critical path: after the compute, or beside
    // it when loads are layer-wise pipelined with it (overlap).
    const SimTime load = tier->take_load_ns();
    duration = tier->overlap() ? std::max(duration, load) : duration + load;
  }
  // Steps end in the order they started (a later one waits for the stages ahead of it).
  const SimTime end =
      replica.in_flight.empty() ? now + duration : std::max(now + duration, replica.step_end);
  // Busy time and idle energy count each instant once, however many steps overlap it.
  const SimTime overlap = replica.busy ? std::max<SimTime>(0, replica.step_end - now) : 0;
  replica.busy = true;
  replica.step_end = end;
  replica.busy_ns += end - now - overlap;
  replica.energy_j += cost.energy_j - replica.idle_w * sim_to_s(std::min(overlap, duration));
  double watts = 0;  // above idle
  if (cost.energy_j > 0) {
    const double mean_w = cost.energy_j / sim_to_s(duration);
    replica.peak_power_w = std::max(replica.peak_power_w, mean_w);
    watts = mean_w - replica.idle_w;
    set_step_power(replica, replica.step_power_w + watts, now);
    // Overlapping steps (pipeline stages) draw together.
    if (!replica.in_flight.empty()) {
      replica.peak_power_w = std::max(replica.peak_power_w, replica.idle_w + replica.step_power_w);
    }
  }
  ++replica.steps;
  ++totals_.steps;
  totals_.preemptions += replica.batch.preempted;
  const StepRecord record{now,
                          duration,
                          replica.kv.used_blocks(),
                          replica.id,
                          prefill_tokens,
                          static_cast<std::int32_t>(shape_.prefills.size()) - verifies,
                          static_cast<std::int32_t>(shape_.decode_contexts.size()) + verifies,
                          replica.batch.preempted,
                          static_cast<std::int32_t>(replica.scheduler->num_running()),
                          static_cast<std::int32_t>(replica.scheduler->num_outstanding() -
                                                    replica.scheduler->num_running()),
                          cost.energy_j};
  for (auto* o : observers_) o->on_step(record, shape_, cost);
  queue_.push(end, kStepEnd, replica.id);
  if (replica.max_in_flight > 1) {
    // The first stage takes the next step once the slowest stage is through this one (its
    // activation send included; the cost model's stage_ns, else an equal share of the GPU time),
    // and the host after its own time.
    const double host = cost[CostComponent::kHost];
    const double gpu = static_cast<double>(duration) - host;
    const double stage = std::max(gpu / replica.max_in_flight, cost.stage_ns);
    const auto interval = std::max<SimTime>(1, std::llround(std::max(stage, host)));
    replica.stage_free = now + std::min(interval, duration);
    queue_.push(replica.stage_free, kStageFree, replica.id);
  }
  replica.in_flight.push_back({std::move(replica.batch), end, watts});
  replica.batch = Batch{};
  router_.on_replica_update(replica);  // the step took KV
}

// The tokens a finished step computed, and the output tokens it emitted (into tokens_ and
// finished_). Instantiated apart for runs with speculation and for disaggregated runs (the only
// ones whose requests are handed off), so that the loop of every other run carries none of their
// work.
template <bool kSpeculative, bool kHandOff>
void Engine::account_step(const Batch& batch, SimTime now) {
  // At most one token event per entry: written in place, counted in num_tokens_.
  if (tokens_.size() < batch.entries.size()) tokens_.resize(batch.entries.size());
  TokenEvent* const events = tokens_.data();
  std::size_t emitted_events = 0;
  for (const auto& entry : batch.entries) {
    Request& r = *entry.request;
    if (entry.decode) {
      // A plain decode completes what it wanted computed and emits one token. It had emitted
      // one before (it was decoding), so its first and previous tokens' times are set.
      ++r.computed;
      ++r.generated;
      r.step_tokens = 0;
      r.in_flight = false;
      const SimTime gap = now - r.last_token;
      r.tbt_max_ns = std::max(r.tbt_max_ns, gap);
      r.last_token = now;
      events[emitted_events++] = TokenEvent{&r, gap, 1};
      if (kHandOff ? r.done() : r.generated >= r.spec.output_tokens) finished_.push_back(&r);
      continue;
    }
    std::int32_t emitted = 1;
    if (!kSpeculative || entry.draft_tokens == 0) {
      r.computed += entry.tokens;
    } else {
      // The verify's own token and its accepted drafts have KV; the rejected slots are rewound by
      // the scheduler (complete_batch). The accepted drafts are output tokens, and so is the
      // bonus token the target sampled after them (counted below).
      const std::int32_t a = speculation_->accepted(r, entry.draft_tokens);
      ++r.spec_steps;
      r.spec_accepted += a;
      ++totals_.spec_steps;
      totals_.spec_drafted += entry.draft_tokens;
      totals_.spec_accepted += a;
      r.computed += 1 + a;
      r.generated += a;
      emitted += a;
    }
    r.step_tokens = 0;
    r.in_flight = false;
    if (r.computed == r.target_tokens()) {
      // The step completed everything this request wanted computed: one output token (and the
      // accepted drafts before it).
      ++r.generated;
      const SimTime gap = r.last_token >= 0 ? now - r.last_token : -1;
      if (r.first_token < 0) r.first_token = now;
      r.tbt_max_ns = std::max(r.tbt_max_ns, gap);
      r.last_token = now;
      events[emitted_events++] = TokenEvent{&r, gap, emitted};
      // Request::done(), with hand_off known false where no request is handed off.
      if (kHandOff ? r.done() : r.generated >= r.spec.output_tokens) finished_.push_back(&r);
    }
  }
  num_tokens_ = emitted_events;
}

void Engine::on_step_end(Replica& replica, SimTime now) {
  Replica::InFlight step = std::move(replica.in_flight.front());
  replica.in_flight.pop_front();
  replica.busy = !replica.in_flight.empty();
  if (step.watts != 0) set_step_power(replica, replica.step_power_w - step.watts, now);
  finished_.clear();
  const bool hand_offs = decode_router_ != nullptr;
  if (speculation_ == nullptr) {
    hand_offs ? account_step<false, true>(step.batch, now)
              : account_step<false, false>(step.batch, now);
  } else {
    hand_offs ? account_step<true, true>(step.batch, now)
              : account_step<true, false>(step.batch, now);
  }
  if (num_tokens_ > 0) {
    const std::span<const TokenEvent> events(tokens_.data(), num_tokens_);
    for (auto* o : observers_) o->on_tokens(events, now);
  }
  replica.scheduler->complete_batch(step.batch, finished_, now, replica.kv);
  router_.on_replica_update(replica);
  // The step's entry vector becomes the replica's next batch: its capacity is kept, so forming
  // a batch allocates nothing once batches have reached their size.
  if (replica.batch.empty()) {
    step.batch.clear();
    std::swap(replica.batch, step.batch);
  }
  bool handed_off = false;
  for (Request* r : finished_) {
    if (r->hand_off) {  // its first token, on a prefill replica: it decodes elsewhere
      r->hand_off = false;
      r->handoff_at = now;
      handoffs_.push_back(r);
      handed_off = true;
      continue;
    }
    r->finished = now;
    ++totals_.finished;
    for (auto* o : observers_) o->on_request_done(*r, /*rejected=*/false);
    if (loop_ != nullptr) loop_->on_request_done(r->spec, now, /*rejected=*/false);
    release(r);
  }
  if (loop_ != nullptr && !finished_.empty()) refill_arrival(now);
  try_start(replica, now);
  if (autoscaler_ != nullptr) autoscaler_->release_if_drained(replica, now);
  // A decode step frees seats and KV; a prefill step may have handed requests off.
  if (handed_off || (replica.role == ReplicaRole::kDecode && !handoffs_.empty())) {
    drain_handoffs(now);
  }
}

}  // namespace servesim
