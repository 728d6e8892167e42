// The Engine's fleet-level events, apart from its step loop (engine.cpp): prefill/decode
// hand-offs with their KV transfers over the cluster's links, and autoscaling evaluations.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/engine/engine.hpp"

namespace servesim {

void Engine::set_disaggregation(Router& decode_router, const ClusterSpec& cluster) {
  decode_router_ = &decode_router;
  decode_router_->attach(fleet_, cost_model_);
  network_ = std::make_unique<LinkNetwork>(fleet_, cluster);
  for (std::size_t i = 0; i < fleet_.size(); ++i) fleet_[i]->node = network_->placement()[i].node;
  incoming_.assign(fleet_.size(), 0);
  // Resolved once here: a transfer then costs one virtual call on each side, as any other.
  prefill_roles_.assign(fleet_.size(), nullptr);
  decode_roles_.assign(fleet_.size(), nullptr);
  for (const auto& r : fleet_) {
    const auto i = static_cast<std::size_t>(r->id);
    const bool decode = r->role == ReplicaRole::kDecode;
    if (decode) {
      decode_roles_[i] = dynamic_cast<DecodeRole*>(r->scheduler.get());
    } else {
      prefill_roles_[i] = dynamic_cast<PrefillRole*>(r->scheduler.get());
    }
    if (decode ? decode_roles_[i] == nullptr : prefill_roles_[i] == nullptr) {
      throw std::invalid_argument(fmt::format("scheduler '{}' of replica {} cannot serve a {} role",
                                              r->scheduler->name(), r->id,
                                              decode ? "decode" : "prefill"));
    }
  }
}

void Engine::set_autoscaler(Autoscaler* autoscaler) {
  if (decode_router_ != nullptr || router_.queue() != nullptr) {
    throw std::invalid_argument(fmt::format(
        "autoscaling needs a router that places each request on a replica (router '{}'{})",
        router_.name(), decode_router_ != nullptr ? ", disaggregated" : " holds a fleet queue"));
  }
  if (fleet_.size() != static_cast<std::size_t>(autoscaler->config().max_replicas)) {
    throw std::invalid_argument("an autoscaled fleet is built with max_replicas replicas");
  }
  autoscaler_ = autoscaler;
}

void Engine::on_autoscale(SimTime now) {
  // Nothing left to arrive or to finish: the run ends here (run() closes the autoscaler).
  if (!pending_ && totals_.arrived == totals_.finished + totals_.rejected) return;
  started_.clear();
  autoscaler_->evaluate(fleet_, now, totals_.arrived, started_);
  for (const ReplicaId id : started_) {
    queue_.push(now + autoscaler_->provisioning_delay(), kProvisioned, id);
  }
  for (const auto& replica : fleet_) autoscaler_->release_if_drained(*replica, now);
  routable_ = autoscaler_->active();
  router_.on_routable(fleet_, routable_);
  queue_.push(now + autoscaler_->config().interval, kAutoscale, 0);
}

void Engine::on_provisioned(ReplicaId id, SimTime now) {
  // A replica cancelled while it was provisioning (and maybe provisioning again) stays as it is.
  if (!autoscaler_->activate(id, now)) return;
  routable_ = autoscaler_->active();
  router_.on_routable(fleet_, routable_);
  try_start(*fleet_[static_cast<std::size_t>(id)], now);
}

double Engine::kv_bytes(const Request& r, const ReplicaSpec& spec) const {
  // Every layer's K and V (or MLA latent) for each token, over all the replica's GPUs.
  const ModelSpec& m = *spec.model;
  return static_cast<double>(r.computed) * m.num_layers *
         m.kv_bytes_per_token_per_layer(spec.kv_dtype_bytes);
}

void Engine::drain_handoffs(SimTime now) {
  bool started = false;
  while (!handoffs_.empty()) {
    Request* r = handoffs_.front();
    eligible_.clear();
    for (const auto& replica : fleet_) {
      if (replica->role != ReplicaRole::kDecode) continue;
      const Replica& d = *replica;
      const std::int64_t seats =
          d.scheduler->num_running() + incoming_[static_cast<std::size_t>(d.id)];
      const std::int64_t blocks = d.kv.blocks_for_tokens(r->computed);
      if (seats < d.scheduler->seat_limit() &&
          blocks <= d.kv.free_blocks() - d.kv.watermark_blocks() && can_ever_hold(d, r->spec)) {
        eligible_.push_back(d.id);
      }
    }
    if (eligible_.empty()) {
      if (!r->handoff_waited) ++totals_.handoff_waits;  // counted once
      r->handoff_waited = true;
      break;
    }
    const ReplicaId to = decode_router_->route(*r, fleet_, eligible_, now);
    if (std::find(eligible_.begin(), eligible_.end(), to) == eligible_.end()) {
      throw std::logic_error(fmt::format("decode router '{}' returned replica {}, not one offered",
                                         decode_router_->name(), to));
    }
    handoffs_.pop_front();
    Replica& d = *fleet_[static_cast<std::size_t>(to)];
    Transfer t{r,
               r->replica,
               to,
               0,
               r->handoff_at,
               now,
               kv_bytes(*r, fleet_[static_cast<std::size_t>(r->replica)]->spec)};
    if (!d.kv.grow(t.blocks, r->computed, /*keep_watermark=*/true)) {
      throw std::logic_error("hand-off: decode KV that was free could not be allocated");
    }
    ++incoming_[static_cast<std::size_t>(to)];
    std::int64_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      transfers_[static_cast<std::size_t>(slot)] = t;
    } else {
      slot = static_cast<std::int64_t>(transfers_.size());
      transfers_.push_back(t);
    }
    network_->start(slot, t.from, t.to, t.bytes, now);
    started = true;
  }
  if (started) schedule_network_event();
}

void Engine::schedule_network_event() {
  const SimTime next = network_->next_change();
  ++network_version_;  // any earlier kTransfer event is stale now
  if (next >= 0) queue_.push(next, kTransfer, network_version_);
}

void Engine::on_transfers(SimTime now) {
  transfers_done_.clear();
  network_->advance(now, transfers_done_);
  for (const std::int64_t slot : transfers_done_) {
    const Transfer t = transfers_[static_cast<std::size_t>(slot)];
    free_slots_.push_back(slot);
    Request& r = *t.request;
    Replica& from = *fleet_[static_cast<std::size_t>(t.from)];
    Replica& to = *fleet_[static_cast<std::size_t>(t.to)];
    prefill_roles_[static_cast<std::size_t>(t.from)]->release_handed_off(&r, from.kv);
    router_.on_replica_update(from);
    r.kv_blocks = t.blocks;
    r.kv_shared = 0;
    r.replica = t.to;
    --incoming_[static_cast<std::size_t>(t.to)];
    decode_roles_[static_cast<std::size_t>(t.to)]->accept_transferred(&r, now);
    ++totals_.transfers;
    totals_.transfer_bytes += t.bytes;
    totals_.transfer_tokens += r.computed;
    const TransferRecord record{r.id, t.from, t.to, t.queued, t.start, now, r.computed, t.bytes};
    for (auto* o : observers_) o->on_transfer(record);
    try_start(from, now);  // its KV is free now
    try_start(to, now);
  }
  schedule_network_event();
}

}  // namespace servesim
