#pragma once

#include <cstdint>
#include <type_traits>

#include <boost/container/vector.hpp>

#include "sim/engine/batch_shape.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// One scheduled request in a step: compute `tokens` tokens of `request` (a decode when 1 token
// past the prompt, else a prefill chunk starting at request->computed). With speculative
// decoding a decode verifies `draft_tokens` draft tokens too: tokens = 1 + draft_tokens.
// The scheduler also notes what the engine needs to shape the step, so that the engine reads a
// plain decode's entry and not its request: `context`, the request's computed tokens when it was
// scheduled, and `decode`, a plain decode (one token past the prompt, no drafts).
// Trivially constructible (an aggregate without member initializers: `BatchEntry{r, 1}` zeroes
// the rest), so that a batch's room can be made without writing it.
struct BatchEntry {
  Request* request;
  std::int32_t tokens;
  std::int32_t draft_tokens;
  std::int32_t context;
  bool decode;
};
static_assert(std::is_trivially_default_constructible_v<BatchEntry>);

// The next engine step of a replica, as formed by its scheduler. Requests stay owned by the
// engine; the batch only points at them.
struct Batch {
  // Boost's vector can grow without writing the new entries (resize(n, default_init)): a
  // scheduler makes room for every request it may schedule and writes entries in place.
  boost::container::vector<BatchEntry> entries;
  std::int32_t preempted = 0;  // requests preempted while forming this batch
  // LoRA: time the adapter loads that admitting its requests took, which the step waits for.
  SimTime lora_load_ns = 0;

  bool empty() const { return entries.empty(); }
  void clear() {
    entries.clear();
    preempted = 0;
    lora_load_ns = 0;
  }
};

}  // namespace servesim
