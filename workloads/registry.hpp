#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/config_node.hpp"
#include "sim/config/kind_table.hpp"
#include "sim/engine/workload.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_sampler.hpp"
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
//   prompt_tokens: {min: N, max: N} keeps only requests with prompts in range (prompt_filter.hpp)
std::unique_ptr<Workload> make_workload(const ConfigNode& node, std::uint64_t seed);

// What an arrival kind does beyond drawing arrival times.
struct ArrivalCapabilities {
  // Yields a finite number of requests by itself (no num_requests or duration_s needed).
  bool ends_on_its_own = false;
};

// One `workload.arrival.kind` of the registry (workloads/registry.cpp).
struct ArrivalEntry {
  std::string_view kind;
  ArrivalCapabilities capabilities;
  // Parses its section (unknown keys are errors), before simulated time 0.
  ArrivalSpec (*parse)(const ConfigNode& section);
};

// What a length kind does beyond drawing prompt and output lengths.
struct LengthCapabilities {
  // Gives requests shared prefixes itself (so `shared_prefix:` cannot be combined with it).
  bool brings_own_prefixes = false;
  bool reads_file = false;  // its section names a CSV `file:` (relative to the config's folder)
};

// One `workload.lengths.kind` of the registry (workloads/registry.cpp).
struct LengthEntry {
  std::string_view kind;
  LengthCapabilities capabilities;
  // Parses its section (unknown keys are errors; files are read), before simulated time 0.
  LengthSpec (*parse)(const ConfigNode& section);
};

// Every entry, sorted by kind.
const std::vector<ArrivalEntry>& arrival_entries();
const std::vector<LengthEntry>& length_entries();
// Known arrival kinds and length kinds, sorted (for messages and the contract test).
std::vector<std::string> arrival_kinds();
std::vector<std::string> length_kinds();
// Known trace formats, sorted.
std::vector<std::string> trace_formats();
// What a workload made by make_workload did so far (zeros raised to 1, clipping, error rows);
// all zero for a workload of another origin.
WorkloadCounts workload_counts(const Workload& workload);

// The registry entry named by section["kind"] (a table of entries with a `kind` name); an unknown
// kind is an error at the key that lists the known ones and the closest.
template <class Entry>
const Entry& read_kind(const ConfigNode& section, std::string_view what,
                       const std::vector<Entry>& table) {
  section.require_map(fmt::format("a {} section", what));
  return lookup_kind(table, section.at("kind"), fmt::format("{} kind", what));
}

}  // namespace servesim
