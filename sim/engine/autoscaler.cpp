#include "sim/engine/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace servesim {

Autoscaler::Autoscaler(const AutoscalingConfig& config, SimTime provisioning_delay,
                       std::size_t fleet_size, SloPolicy slo, SimTime request_overhead_ns)
    : config_(config),
      delay_(provisioning_delay),
      slo_(std::move(slo)),
      overhead_ns_(request_overhead_ns) {
  if (fleet_size != static_cast<std::size_t>(config_.max_replicas)) {
    throw std::invalid_argument("an autoscaled fleet is built with max_replicas replicas");
  }
  states_.assign(fleet_size, ReplicaState::kOff);
  ready_at_.assign(fleet_size, 0);
  counts_[static_cast<std::size_t>(ReplicaState::kOff)] = static_cast<std::int32_t>(fleet_size);
  for (int i = 0; i < config_.initial_replicas; ++i) set_state(i, ReplicaState::kActive, 0);
  peak_billed_ = config_.initial_replicas;
}

void Autoscaler::advance(SimTime now) {
  const SimTime dt = now - billed_at_;
  const auto serving = count(ReplicaState::kActive) + count(ReplicaState::kDraining);
  billed_ns_ += dt * (serving + count(ReplicaState::kProvisioning));
  serving_ns_ += dt * serving;
  billed_at_ = now;
}

void Autoscaler::set_state(ReplicaId id, ReplicaState s, SimTime now) {
  advance(now);
  ReplicaState& old = states_[static_cast<std::size_t>(id)];
  --counts_[static_cast<std::size_t>(old)];
  ++counts_[static_cast<std::size_t>(s)];
  const bool was_active = old == ReplicaState::kActive;
  old = s;
  transitions_.push_back({now, id, s});
  if (was_active != (s == ReplicaState::kActive)) rebuild_active();
  peak_billed_ =
      std::max(peak_billed_, static_cast<std::int32_t>(states_.size()) - count(ReplicaState::kOff));
}

void Autoscaler::rebuild_active() {
  active_.clear();
  for (std::size_t i = 0; i < states_.size(); ++i) {
    if (states_[i] == ReplicaState::kActive) active_.push_back(static_cast<ReplicaId>(i));
  }
}

void Autoscaler::evaluate(const Fleet& fleet, SimTime now, std::int64_t arrived,
                          std::vector<ReplicaId>& provisioning_started) {
  advance(now);
  const std::int32_t current = count(ReplicaState::kActive) + count(ReplicaState::kProvisioning);
  Tick tick{now, 0, current, ended_, missed_};
  ended_ = missed_ = 0;
  for (const ReplicaId id : active_) {
    const Replica& r = *fleet[static_cast<std::size_t>(id)];
    if (config_.metric == AutoscaleMetric::kQueue) {
      tick.load += static_cast<double>(r.scheduler->num_outstanding() - r.scheduler->num_running());
    } else if (config_.metric == AutoscaleMetric::kOutstanding) {
      tick.load += static_cast<double>(r.scheduler->num_outstanding());
    } else if (config_.metric == AutoscaleMetric::kKvUse) {
      tick.load +=
          static_cast<double>(r.kv.used_blocks()) / static_cast<double>(r.kv.total_blocks());
    }
  }
  ticks_.push_back(tick);
  while (now - ticks_.front().time >= config_.window) ticks_.pop_front();
  double metric = std::numeric_limits<double>::quiet_NaN();
  if (config_.metric == AutoscaleMetric::kSloMiss) {
    std::int64_t ended = 0, missed = 0;
    for (const Tick& t : ticks_) {
      ended += t.ended;
      missed += t.missed;
    }
    if (ended > 0) metric = static_cast<double>(missed) / static_cast<double>(ended);
  } else {
    double sum = 0;
    for (const Tick& t : ticks_) sum += t.load / t.current;
    metric = sum / static_cast<double>(ticks_.size());
  }
  std::int32_t desired = current;
  if (!std::isnan(metric)) {
    const double ratio = metric / config_.target;
    if (std::abs(ratio - 1) > config_.tolerance) {
      desired = static_cast<std::int32_t>(
          std::min<double>(std::ceil(current * ratio), static_cast<double>(config_.max_replicas)));
    }
  }
  desired = std::clamp(desired, config_.min_replicas, config_.max_replicas);
  recommendations_.emplace_back(now, desired);
  while (now - recommendations_.front().first > config_.scale_down_stabilization) {
    recommendations_.pop_front();
  }
  std::int32_t final_count = desired;
  if (desired < current) {
    std::int32_t highest = desired;
    for (const auto& [t, d] : recommendations_) highest = std::max(highest, d);
    final_count = std::min(current, highest);
  }
  if (final_count > current) {
    ++scale_ups_;
    std::int32_t need = final_count - current;
    for (std::size_t i = 0; i < states_.size() && need > 0; ++i) {
      if (states_[i] != ReplicaState::kDraining) continue;
      set_state(static_cast<ReplicaId>(i), ReplicaState::kActive, now);
      --need;
    }
    for (std::size_t i = 0; i < states_.size() && need > 0; ++i) {
      if (states_[i] != ReplicaState::kOff) continue;
      set_state(static_cast<ReplicaId>(i), ReplicaState::kProvisioning, now);
      ready_at_[i] = now + delay_;
      provisioning_started.push_back(static_cast<ReplicaId>(i));
      --need;
    }
  } else if (final_count < current) {
    ++scale_downs_;
    std::int32_t excess = current - final_count;
    for (std::size_t i = states_.size(); i-- > 0 && excess > 0;) {
      if (states_[i] != ReplicaState::kProvisioning) continue;
      set_state(static_cast<ReplicaId>(i), ReplicaState::kOff, now);
      --excess;
    }
    while (excess-- > 0) {
      ReplicaId pick = kNoReplica;
      std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
      for (const ReplicaId id : active_) {  // ascending: a tie keeps the highest id
        const std::int64_t n = fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
        if (n <= fewest) {
          fewest = n;
          pick = id;
        }
      }
      set_state(pick, ReplicaState::kDraining, now);
    }
  }
  sample(fleet, now, arrived, desired, metric);
}

bool Autoscaler::activate(ReplicaId id, SimTime now) {
  // A replica cancelled and provisioned again in between has a later time of its own.
  if (state(id) != ReplicaState::kProvisioning || ready_at_[static_cast<std::size_t>(id)] != now) {
    return false;
  }
  set_state(id, ReplicaState::kActive, now);
  return true;
}

bool Autoscaler::release_if_drained(const Replica& replica, SimTime now) {
  if (state(replica.id) != ReplicaState::kDraining || !replica.in_flight.empty() ||
      replica.scheduler->num_outstanding() != 0) {
    return false;
  }
  set_state(replica.id, ReplicaState::kOff, now);
  return true;
}

void Autoscaler::finish(const Fleet& fleet, SimTime now, std::int64_t arrived) {
  if (finished_) return;
  finished_ = true;
  advance(now);
  if (now > last_sample_ || samples_.empty()) {
    sample(fleet, now, arrived, -1, std::numeric_limits<double>::quiet_NaN());
  }
}

void Autoscaler::sample(const Fleet& fleet, SimTime now, std::int64_t arrived, std::int32_t desired,
                        double metric) {
  SimTime busy = 0;
  for (const auto& r : fleet) busy += r->busy_ns;
  AutoscaleSample s;
  s.time = now;
  s.active = count(ReplicaState::kActive);
  s.provisioning = count(ReplicaState::kProvisioning);
  s.draining = count(ReplicaState::kDraining);
  s.desired = desired;
  s.metric = metric;
  s.arrivals = arrived - arrived_at_last_sample_;
  s.output_tokens = tokens_ - tokens_at_last_sample_;
  s.billed_ns = billed_ns_ - billed_at_last_sample_;
  const SimTime serving = serving_ns_ - serving_ns_at_last_sample_;
  // A step's busy time is counted when it starts, so a share can pass 1 by a step's length.
  s.utilisation = serving > 0 ? std::min(1.0, static_cast<double>(busy - busy_at_last_sample_) /
                                                  static_cast<double>(serving))
                              : 0.0;
  samples_.push_back(s);
  last_sample_ = now;
  arrived_at_last_sample_ = arrived;
  tokens_at_last_sample_ = tokens_;
  billed_at_last_sample_ = billed_ns_;
  serving_ns_at_last_sample_ = serving_ns_;
  busy_at_last_sample_ = busy;
}

void Autoscaler::on_tokens(std::span<const TokenEvent> tokens, SimTime /*now*/) {
  for (const TokenEvent& t : tokens) tokens_ += t.tokens;
}

void Autoscaler::on_request_done(const Request& r, bool rejected) {
  if (!slo_.any() || r.spec.slo_class < 0) return;
  ++ended_;
  if (rejected) {
    ++missed_;
    return;
  }
  const double ttft = sim_to_ms(r.first_token - r.spec.arrival + overhead_ns_);
  const double e2e = sim_to_ms(r.finished - r.spec.arrival + overhead_ns_);
  const double tpot = r.generated > 1 ? (e2e - ttft) / static_cast<double>(r.generated - 1) : 0.0;
  if (!slo_.classes()[static_cast<std::size_t>(r.spec.slo_class)].bounds.met(
          ttft, static_cast<double>(r.tbt_max_ns) * 1e-6, tpot, e2e)) {
    ++missed_;
  }
}

}  // namespace servesim
