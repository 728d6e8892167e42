#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/time.hpp"

namespace servesim {

using RequestId = std::int64_t;
using ReplicaId = std::int32_t;
inline constexpr ReplicaId kNoReplica = -1;
// What Router::route returns for a request it keeps in a fleet-level queue (replicas pull it), and
// for one its admission control refuses.
inline constexpr ReplicaId kQueued = -2;
inline constexpr ReplicaId kRefused = -3;
// The deadline of a request without one: later than any event of a run.
inline constexpr SimTime kNoDeadline = INT64_MAX;

// Why a request was rejected (0: it was not).
enum class RejectReason : std::int8_t { kNone = 0, kFitsNoReplica = 1, kAdmission = 2 };

// A prompt's block hashes as a trace gives them (Mooncake: one id per `block_tokens`-token block
// of the prompt, equal leading ids meaning an equal prefix). chain[j] stands for ids 0…j together
// (a hash over them, see workloads/mooncake_reader.hpp), so two prompts hold equal tokens up to
// the end of hash block j exactly when their chains agree at j. Chain values are ≥ 2^62, apart
// from prefix groups (small, ≥ 0) and own-content ids (≤ −2) in the KV cache's block keys.
struct PrefixHashes {
  std::int32_t block_tokens = 512;
  std::vector<std::int64_t> chain;
};

// What a workload yields: one request's arrival and lengths (and an optional shared prefix).
struct RequestSpec {
  SimTime arrival = 0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;
  std::int64_t prefix_group = -1;  // requests of one group share their first prefix_tokens
  std::int32_t prefix_tokens = 0;
  std::int32_t slo_class = -1;  // index into the run's SLO classes (sim/engine/slo.hpp); -1: none
  // Set (with prefix_group −1): the prompt's first prefix_tokens tokens are keyed by these block
  // hashes in the prefix cache instead of by a group. Null for every workload but hashed traces.
  std::shared_ptr<const PrefixHashes> hashes = nullptr;
  // Set (with hashes covering prompt + output tokens): the output's full blocks are keyed by the
  // hashes too and published to the prefix cache when the request finishes, as vLLM V1 hashes
  // every full block of a sequence, so a later request that continues this one (a session's next
  // turn) finds the reply cached. What a request may take from the cache at admission stays
  // within its first prefix_tokens prompt tokens.
  bool hashes_cover_output = false;
  // A benchmark client's warm-up request (workload.client): served like any other, left out of
  // the metrics.
  bool warmup = false;
  std::int32_t adapter = -1;  // its LoRA adapter (the run's `lora:` section); -1: the base model
  // Multi-turn and agentic workloads: the session (or agent task) the request belongs to and its
  // place in it (turn 0 first); -1 for requests of every other workload.
  std::int64_t session = -1;
  std::int32_t turn = -1;

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
// Layout: the fields every step reads or writes come first and the spec (whose prompt and output
// lengths every step reads) right after them, so a step touches few cache lines of a request.
struct Request {
  RequestId id = 0;
  ReplicaId replica = kNoReplica;
  std::int32_t computed = 0;
  std::int32_t generated = 0;
  std::int32_t cached_prefix = 0;  // tokens served from the prefix cache at the last admission
  std::int32_t preemptions = 0;
  std::int64_t kv_blocks = 0;    // blocks held in the replica's KV cache
  std::int64_t kv_shared = 0;    // of which leading prefix-cache blocks shared with others
  std::int32_t step_tokens = 0;  // tokens scheduled in the step being formed or run (0 = none)
  // In a step that started and has not ended. Marked on every request only where a replica keeps
  // several steps in flight; elsewhere plain decodes are left unmarked, as no batch is formed then.
  bool in_flight = false;
  SimTime first_token = -1;
  SimTime last_token = -1;
  SimTime tbt_max_ns = 0;  // largest gap between output tokens so far
  RequestSpec spec;
  SimTime first_scheduled = -1;
  SimTime finished = -1;
  // Deadline scheduling (sim/engine/slo.hpp): the engine-time instant its class's first bound falls
  // due (TTFT, else E2E; kNoDeadline without one), the router's estimate of its wait before it is
  // first scheduled (-1: none made), and what admission control did with it.
  SimTime deadline = kNoDeadline;
  bool deadline_ttft = false;  // the deadline bounds its first token (else its finish)
  SimTime est_wait = -1;
  SimTime est_due =
      -1;  // its estimate of when the deadline's event happens (first token or finish)
  RejectReason reject_reason = RejectReason::kNone;
  bool demoted = false;  // served best effort, behind every request that could still make it
  // Prefill/decode disaggregation: it is prefilled on a prefill replica, which is done with it
  // at its first token and keeps its KV until the transfer to a decode replica ends.
  bool hand_off = false;
  bool handoff_waited = false;  // it found no decode replica with room at once
  SimTime handoff_at = -1;      // its first token, when it joined the hand-off queue
  // Speculative decoding: decode steps that verified draft tokens, and the drafts accepted.
  std::int32_t spec_steps = 0;
  std::int32_t spec_accepted = 0;

  std::int32_t target_tokens() const { return spec.prompt_tokens + generated; }
  std::int32_t pending_tokens() const { return target_tokens() - computed; }
  // Done on this replica: every output token, or the first on a prefill replica (hand_off).
  bool done() const { return generated >= (hand_off ? 1 : spec.output_tokens); }
  // A step of one new token on a request past its prompt is a decode.
  bool is_decode() const { return generated > 0 && pending_tokens() == 1; }
};

}  // namespace servesim
