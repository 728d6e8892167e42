#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/engine/workload.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// Builds the workload described by the run config's `workload:` section. `seed` is the run's
// seed; relative file paths resolve against node.base_dir(). Everything is validated here
// (files opened, headers checked), before simulated time 0.
//
// workload:
//   trace: {format: vidur|azure|measured, file: PATH, qps: X | time_scale: X}   # or
//   arrival: {kind: poisson|gamma|static, qps: X, cv: X (gamma)} |
//            {kind: stages, stages: [{rate: X, duration_s: X}, …], gap_s: X (0)}
//   lengths: {kind: trace, file: PATH} | {kind: zipf, min_tokens, max_tokens, theta (0.6),
//            prefill_decode_ratio} | {kind: uniform, min_tokens, max_tokens,
//            prefill_decode_ratio} | {kind: fixed, prompt_tokens, output_tokens} |
//            {kind: shared_prefix_chat, num_groups, users_per_group, system_prompt_tokens,
//            question_tokens, output_tokens}
//   num_requests: N   duration_s: X   start_s: X (0)   max_tokens: N
//   shared_prefix: {num_groups: N, prefix_tokens: N} | {group_by: prompt_length}
//   trace.output_tokens: N replaces the output count of every successful row
std::unique_ptr<Workload> make_workload(const ConfigNode& node, std::uint64_t seed);
// Known arrival kinds and length kinds, sorted (for messages and the contract test).
std::vector<std::string> arrival_kinds();
std::vector<std::string> length_kinds();
// Known trace formats, sorted.
std::vector<std::string> trace_formats();
// What a workload made by make_workload did so far (zeros raised to 1, clipping, error rows);
// all zero for a workload of another origin.
WorkloadCounts workload_counts(const Workload& workload);

}  // namespace servesim
