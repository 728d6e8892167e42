#pragma once

#include <cstdint>
#include <optional>

#include "sim/engine/time.hpp"

namespace servesim {

// The options every workload shares (the `workload:` keys outside trace/arrival/lengths),
// already converted to simulator units.
struct WorkloadOptions {
  SimTime start = 0;                         // start_s: added to every arrival
  std::optional<SimTime> duration;           // duration_s: stop at the first arrival ≥ start+this
  std::optional<std::int64_t> num_requests;  // stop after this many requests
  std::int32_t max_tokens = 0;               // > 0: clip prompt + output to this many tokens
  std::int64_t prefix_groups = 0;            // > 0: requests draw one of this many shared prefixes
  std::int32_t prefix_tokens = 0;            // length of each group's shared prefix
  // shared_prefix: {group_by: prompt_length}: requests of equal prompt length share their whole
  // prompt (a trace drawn from a fixed pool of prompts, as the measured sim2real runs).
  bool prefix_by_prompt_length = false;
  // trace.output_tokens: > 0 replaces the output count of every successful trace row (runs with
  // ignore_eos generated this many tokens whatever the re-tokenized count in the trace says).
  std::int32_t output_tokens_override = 0;
};

// What a workload did to the requests it yielded, for the run summary.
struct WorkloadCounts {
  std::int64_t yielded = 0;
  std::int64_t zero_prompt_rows = 0;  // trace rows with prompt 0, raised to 1
  std::int64_t zero_output_rows = 0;  // trace rows with output 0, raised to 1
  std::int64_t error_rows = 0;        // measured rows with has_error (replayed; left out of pools)
  std::int64_t clipped_to_max_tokens = 0;
  bool prompt_filter = false;                  // workload.prompt_tokens is set
  std::int64_t left_out_by_prompt_tokens = 0;  // requests outside workload.prompt_tokens
};

}  // namespace servesim
