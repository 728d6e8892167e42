#include "sim/engine.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace servesim {

Engine::Engine(Fleet& fleet, Router& router, Workload& workload, const CostModel& cost_model,
               std::vector<RunObserver*> observers)
    : fleet_(fleet),
      router_(router),
      workload_(workload),
      cost_model_(cost_model),
      observers_(std::move(observers)) {
  if (fleet_.empty()) throw std::invalid_argument("Engine needs at least one replica");
  router_.attach(fleet_, cost_model_);
  for (auto& r : fleet_) {
    r->idle_w = cost_model_.idle_power_w(r->spec);
    fleet_power_w_ += r->idle_w;
  }
  if (FleetQueue* q = router_.queue()) {
    for (auto& r : fleet_) r->scheduler->attach_queue(q, r->id);
  }
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
  std::int64_t events = 0;
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    totals_.end_time = e.time;
    if (e.kind == kArrival) {
      on_arrivals(e.time);
    } else {
      on_step_end(*fleet_[static_cast<std::size_t>(e.target)], e.time);
    }
    if (progress_ && (++events & 0xFFFF) == 0) progress_(totals_, e.time);
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) {
      totals_.complete = false;
      totals_.peak_power_w = std::max(totals_.peak_power_w, fleet_power_w_);
      if (progress_) progress_(totals_, totals_.end_time);
      return totals_;
    }
  }
  if (totals_.arrived != totals_.finished + totals_.rejected) {
    throw std::logic_error(fmt::format(
        "simulation stalled: {} requests arrived, {} finished, {} rejected (a scheduler left "
        "requests waiting with no step in flight)",
        totals_.arrived, totals_.finished, totals_.rejected));
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
  // Admit every request that arrives at this instant before any replica forms a batch.
  while (pending_ && pending_->arrival == now) {
    admit(*pending_, now);
    pending_ = workload_.next();
    if (pending_ && pending_->arrival < last_arrival_) {
      throw std::logic_error(fmt::format("workload '{}' yielded arrivals out of order ({} < {} ns)",
                                         workload_.name(), pending_->arrival, last_arrival_));
    }
    if (pending_) last_arrival_ = pending_->arrival;
  }
  if (pending_) queue_.push(pending_->arrival, kArrival, 0);
  for (auto& replica : fleet_) {
    if (!replica->busy) try_start(*replica, now);
  }
}

void Engine::admit(const RequestSpec& spec, SimTime now) {
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
  const std::int64_t total = static_cast<std::int64_t>(spec.prompt_tokens) + spec.output_tokens;
  // max_model_len bounds the sequence, prompt + output; the KV peaks one token lower.
  eligible_.clear();
  for (const auto& replica : fleet_) {
    if (total <= replica->max_model_len && replica->kv.can_ever_fit(spec.peak_kv_tokens())) {
      eligible_.push_back(replica->id);
    }
  }
  if (eligible_.empty()) r->reject_reason = RejectReason::kFitsNoReplica;
  const ReplicaId id = eligible_.empty() ? kRefused : router_.route(*r, fleet_, eligible_, now);
  if (id == kRefused) {
    if (r->reject_reason == RejectReason::kNone) {
      throw std::logic_error(
          fmt::format("router '{}' refused a request without a reason", router_.name()));
    }
    ++totals_.rejected;
    for (auto* o : observers_) o->on_request_done(*r, /*rejected=*/true);
    release(r);
    return;
  }
  if (id == kQueued) return;  // the router holds it; a replica pulls it when it forms a batch
  r->replica = id;
  fleet_[static_cast<std::size_t>(id)]->scheduler->enqueue(r, now);
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
  replica.batch.clear();
  replica.scheduler->next_batch(now, replica.kv, replica.batch);
  if (replica.batch.empty()) {
    if (replica.busy) set_step_power(replica, 0, now);
    replica.busy = false;
    totals_.preemptions += replica.batch.preempted;
    return;
  }
  replica.batch.shape_into(shape_);
  const StepCost cost = cost_model_.step(shape_, replica.spec);
  const SimTime duration = cost.total_ns > 0 ? cost.total_ns : 1;
  std::int32_t prefill_tokens = 0;
  for (const auto& p : shape_.prefills) prefill_tokens += p.tokens;
  for (const auto& entry : replica.batch.entries) {
    if (entry.request->first_scheduled < 0) entry.request->first_scheduled = now;
  }
  replica.busy = true;
  replica.step_end = now + duration;
  replica.busy_ns += duration;
  replica.energy_j += cost.energy_j;
  if (cost.energy_j > 0) {
    const double watts = cost.energy_j / sim_to_s(duration);
    replica.peak_power_w = std::max(replica.peak_power_w, watts);
    set_step_power(replica, watts - replica.idle_w, now);
  }
  ++replica.steps;
  ++totals_.steps;
  totals_.preemptions += replica.batch.preempted;
  const StepRecord record{now,
                          duration,
                          replica.kv.used_blocks(),
                          replica.id,
                          prefill_tokens,
                          static_cast<std::int32_t>(shape_.prefills.size()),
                          static_cast<std::int32_t>(shape_.decode_contexts.size()),
                          replica.batch.preempted,
                          static_cast<std::int32_t>(replica.scheduler->num_running()),
                          static_cast<std::int32_t>(replica.scheduler->num_outstanding() -
                                                    replica.scheduler->num_running()),
                          cost.energy_j};
  for (auto* o : observers_) o->on_step(record, shape_, cost);
  queue_.push(now + duration, kStepEnd, replica.id);
}

void Engine::on_step_end(Replica& replica, SimTime now) {
  for (const auto& entry : replica.batch.entries) {
    Request& r = *entry.request;
    r.computed += entry.tokens;
    r.step_tokens = 0;
    if (r.computed == r.target_tokens()) {
      // The step completed everything this request wanted computed: one output token.
      ++r.generated;
      const SimTime gap = r.last_token >= 0 ? now - r.last_token : -1;
      if (r.first_token < 0) r.first_token = now;
      if (gap > static_cast<SimTime>(r.tbt_max_ns)) r.tbt_max_ns = static_cast<double>(gap);
      r.last_token = now;
      for (auto* o : observers_) o->on_token(r, now, gap);
    }
  }
  finished_.clear();
  replica.scheduler->complete_batch(replica.batch, now, replica.kv, finished_);
  for (Request* r : finished_) {
    r->finished = now;
    ++totals_.finished;
    for (auto* o : observers_) o->on_request_done(*r, /*rejected=*/false);
    release(r);
  }
  try_start(replica, now);
}

}  // namespace servesim
