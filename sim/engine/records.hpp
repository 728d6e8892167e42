#pragma once

#include <cstdint>

namespace servesim {

// One row of requests.h5 / requests.csv, in request-id order. Times in ns of simulated time;
// -1 = never happened (or undefined: TPOT of a one-token request, latencies of a rejected one).
// The latencies are the engine's: summary.json adds the cost model's request overhead to TTFT
// and E2E, these columns do not.
struct RequestRecord {
  std::int64_t id;
  std::int64_t arrival_ns;
  std::int64_t first_scheduled_ns;
  std::int64_t first_token_ns;
  std::int64_t finished_ns;
  std::int64_t ttft_ns;              // first_token − arrival
  double tpot_ns;                    // (finished − first_token) / (output tokens − 1)
  std::int64_t e2e_ns;               // finished − arrival
  std::int64_t scheduling_delay_ns;  // first_scheduled − arrival
  std::int64_t tbt_max_ns;           // largest gap between two of its output tokens
  std::int32_t prompt_tokens;
  std::int32_t output_tokens;
  std::int32_t cached_prefix_tokens;
  std::int32_t preemptions;
  std::int32_t replica;      // -1 when rejected
  std::int32_t rejected;     // RejectReason: 1 fits no replica, 2 refused by admission control; 0
  std::int64_t deadline_ns;  // engine-time deadline (sim/engine/slo.hpp); -1 = none
  std::int64_t est_wait_ns;  // the router's estimate of scheduling_delay_ns; -1 = none made
  std::int32_t slo_class;    // index into summary.json slo.classes; -1 = none
  std::int32_t demoted;      // 1 when admission control served it best effort, else 0
  // Speculative decoding (columns written only when the run speculates): decode steps that
  // verified drafts, and the drafts accepted. Mean acceptance length = 1 + accepted / steps.
  std::int32_t spec_steps;
  std::int32_t spec_accepted_tokens;
};

// One row of steps.h5 / steps.csv: one engine step of one replica.
struct StepRecord {
  std::int64_t start_ns;
  std::int64_t duration_ns;
  std::int64_t kv_blocks_used;  // after the batch was formed
  std::int32_t replica;
  std::int32_t prefill_tokens;
  std::int32_t num_prefills;
  std::int32_t num_decodes;
  std::int32_t preempted;  // preemptions while forming this batch
  std::int32_t running;    // requests holding KV on the replica after the batch was formed
  std::int32_t waiting;    // requests queued on the replica, not yet admitted (or preempted)
  double energy_j;         // board energy of the replica's GPUs over the step (0: not priced)
};

// One KV transfer of disaggregated serving: a request's KV from a prefill to a decode replica.
struct TransferRecord {
  std::int64_t request;
  std::int32_t from_replica;
  std::int32_t to_replica;
  std::int64_t queued_ns;  // first token on the prefill replica (it waits for decode room)
  std::int64_t start_ns;   // decode KV allocated, bytes start to flow
  std::int64_t end_ns;
  std::int32_t tokens;  // of KV moved
  double bytes;
};

}  // namespace servesim
