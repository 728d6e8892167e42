#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/time.hpp"

namespace servesim {

using RequestId = std::int64_t;
using ReplicaId = std::int32_t;
inline constexpr ReplicaId kNoReplica = -1;

// What a workload yields: one request's arrival and lengths (and an optional shared prefix).
struct RequestSpec {
  SimTime arrival = 0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;
  std::int64_t prefix_group = -1;  // requests of one group share their first prefix_tokens
  std::int32_t prefix_tokens = 0;

  // The most KV this request ever holds: the last output token is sampled but never fed back,
  // so its KV is never written (prompt + output − 1, as in vLLM; at least the prompt).
  std::int64_t peak_kv_tokens() const {
    return static_cast<std::int64_t>(prompt_tokens) + std::max(output_tokens - 1, 0);
  }
};

// A request inside the simulator. Token accounting follows vLLM V1: `computed` tokens have KV in
// the cache; the request wants prompt + generated tokens computed; each step that completes that
// (a decode, or the last chunk of a (re)prefill) emits one output token.
// Invariants: 0 ≤ computed ≤ prompt + generated; generated ≤ output_tokens.
struct Request {
  RequestId id = 0;
  RequestSpec spec;
  ReplicaId replica = kNoReplica;
  std::int32_t computed = 0;
  std::int32_t generated = 0;
  std::int32_t cached_prefix = 0;  // tokens served from the prefix cache at the last admission
  std::int32_t preemptions = 0;
  std::int64_t kv_blocks = 0;    // blocks held in the replica's KV cache
  std::int64_t kv_shared = 0;    // of which leading prefix-cache blocks shared with others
  std::int32_t step_tokens = 0;  // tokens scheduled in the step being formed or run (0 = none)
  SimTime first_scheduled = -1;
  SimTime first_token = -1;
  SimTime last_token = -1;
  SimTime finished = -1;
  double tbt_max_ns = 0;  // largest gap between output tokens so far

  std::int32_t target_tokens() const { return spec.prompt_tokens + generated; }
  std::int32_t pending_tokens() const { return target_tokens() - computed; }
  bool done() const { return generated >= spec.output_tokens; }
  // A step of one new token on a request past its prompt is a decode.
  bool is_decode() const { return generated > 0 && pending_tokens() == 1; }
};

}  // namespace servesim
