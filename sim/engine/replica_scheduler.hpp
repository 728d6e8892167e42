#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/batch.hpp"
#include "sim/engine/fleet_queue.hpp"
#include "sim/engine/kv_cache.hpp"
#include "sim/engine/lora_cache.hpp"
#include "sim/engine/request.hpp"
#include "sim/engine/time.hpp"

namespace servesim {

// Forms the batches of one replica and owns its waiting and running queues. The engine hands it
// arrived requests, asks for the next batch when the replica is idle, and reports the end of
// each step. Requests are owned by the engine; the scheduler holds pointers until it returns
// them through `finished`. Not thread-safe: one scheduler per replica per run.
// What only some schedulers can do is an optional interface a scheduler also derives from
// (PrefillRole and DecodeRole below, FleetQueuePuller in fleet_queue.hpp); its registry entry
// declares it, and the engine resolves it once, before the run.
class ReplicaScheduler {
 public:
  ReplicaScheduler() = default;
  ReplicaScheduler(const ReplicaScheduler&) = delete;
  ReplicaScheduler& operator=(const ReplicaScheduler&) = delete;
  virtual ~ReplicaScheduler() = default;

  virtual std::string_view name() const = 0;
  // Accepts an arrived request (already checked to fit this replica).
  virtual void enqueue(Request* request, SimTime now) = 0;
  // Forms the next batch into `batch` (empty when nothing can run). May preempt running requests
  // (recompute: their KV is freed and they wait again, ahead of new arrivals); never drops one.
  virtual void next_batch(SimTime now, KvCache& kv, Batch& batch) = 0;
  // Called after the engine applied a finished step (token counts advanced, tokens emitted);
  // `finished` are the batch's requests that are now done (Request::done), in batch order. The
  // scheduler removes them from its running set and frees their KV, except that a request with
  // hand_off set keeps its KV at its first token (only a PrefillRole scheduler is given such
  // requests).
  virtual void complete_batch(const Batch& batch, std::span<Request* const> finished, SimTime now,
                              KvCache& kv) = 0;
  // Most requests it runs at once (max_num_seqs).
  virtual std::int32_t seat_limit() const = 0;
  // Requests waiting or running (outstanding work, for routers).
  virtual std::int64_t num_outstanding() const = 0;
  // Requests admitted and holding KV.
  virtual std::int64_t num_running() const = 0;
  // Tokens its outstanding requests must still compute before they decode, beyond the step in
  // flight: the rest of their prompts, and prompt + generated tokens for a preempted request that
  // recomputes.
  virtual std::int64_t prefill_backlog_tokens() const = 0;
  // The decode load of its outstanding requests, for routers that price a request's stay:
  // appends to `decoding` the context (prompt + generated tokens) of each running request that
  // decodes now, and to `later` the context each other outstanding request decodes at once its
  // prefill is done (prompt + generated).
  virtual void decode_contexts(std::vector<std::int32_t>& decoding,
                               std::vector<std::int32_t>& later) const = 0;
  // Most tokens one step may carry (the configured budget or this scheduler's default); the
  // memory planner reserves activations for it.
  virtual std::int32_t token_budget() const = 0;
  // Multi-LoRA serving: admit requests only while their adapters get a slot of `cache` (which
  // outlives the scheduler's use of it), and add the loads to the batch (Batch::lora_load_ns).
  // False for a scheduler that cannot.
  virtual bool attach_lora(LoraCache* /*cache*/) { return false; }
};

// Optional interface of a scheduler that serves the prefill side of prefill/decode
// disaggregation: it returns a request with hand_off set through `finished` at its first token
// still holding its KV, and frees that KV when told the transfer ended.
class PrefillRole {
 public:
  virtual ~PrefillRole() = default;
  // Frees the KV of `request`, handed off earlier, whose transfer has ended.
  virtual void release_handed_off(Request* request, KvCache& kv) = 0;
};

// Optional interface of a scheduler that serves the decode side of prefill/decode
// disaggregation.
class DecodeRole {
 public:
  virtual ~DecodeRole() = default;
  // Adds a request transferred in (its KV already held here, prompt computed, first token
  // emitted) to the running set.
  virtual void accept_transferred(Request* request, SimTime now) = 0;
};

}  // namespace servesim
