#pragma once

#include <cstdint>
#include <memory>

#include "sim/config/config_node.hpp"
#include "sim/engine/workload.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// Builds the closed-loop workload of a `workload:` section holding `sessions:` or `agentic:`
// (SessionWorkload, AgenticWorkload), with `arrival:` giving the session (task) starts and
// start_s, duration_s and num_requests (a cap on all requests) in `options`. Refuses the keys
// that do not apply (trace, lengths, max_tokens, shared_prefix) and checks every key of the
// section, before simulated time 0.
//
// workload:
//   arrival: {kind: poisson, qps: 0.5}
//   sessions: {num_sessions: N, turns: COUNT, lengths: LENGTHS, think_time_s: X (0),
//              max_prompt_tokens: N (unbounded)}
//   agentic: {num_tasks: N, root: LENGTHS, fan_out: COUNT, tool_calls: LENGTHS,
//             aggregate: LENGTHS (none)}
//   COUNT: {kind: fixed, count} | {kind: uniform, min, max} | {kind: geometric, mean, max}
//   LENGTHS: a lengths section of kind fixed, uniform, zipf or trace
std::unique_ptr<Workload> make_closed_loop_workload(const ConfigNode& node,
                                                    const WorkloadOptions& options,
                                                    std::uint64_t seed);

}  // namespace servesim
