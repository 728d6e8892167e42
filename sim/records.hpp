#pragma once

#include <cstdint>

namespace servesim {

// One row of requests.h5 / requests.csv. Times in ns of simulated time; -1 = never happened.
struct RequestRecord {
  std::int64_t id;
  std::int64_t arrival_ns;
  std::int64_t first_scheduled_ns;
  std::int64_t first_token_ns;
  std::int64_t finished_ns;
  std::int32_t prompt_tokens;
  std::int32_t output_tokens;
  std::int32_t cached_prefix_tokens;
  std::int32_t preemptions;
  std::int32_t replica;   // -1 when rejected
  std::int32_t rejected;  // 1 when rejected (never fits any replica), else 0
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
};

}  // namespace servesim
