#pragma once

#include <set>
#include <string>
#include <vector>

#include "sim/config_node.hpp"
#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// The traced runs held out of every fit by default (comma-separated exp_ids).
std::string default_held_out();

// The serving-engine constants `sim2real --fit` fits for one GPU (what configs/engines/*.yaml
// holds): host time of a CUDA-graph decode step and of an eager (prefill-carrying) step, the
// fraction of the memory bandwidth the engine's decode attention reaches, and the client-observed
// time of a request outside every step.
struct EngineConstants {
  double graph_floor_ns = 0;
  double eager_floor_ns = 0;
  double decode_bw_fraction = 0.7;
  double request_overhead_ns = 0;
  // `base` (an engine profile as read) with these constants for `gpu`, as an inline YAML flow
  // map usable as ReplayOptions::engine; everything else in `base` is kept.
  std::string inline_yaml(const ConfigNode& base, const std::string& gpu) const;
};

struct FitResult {
  std::string gpu;     // catalog name of the fit runs' GPU
  std::string engine;  // the fitted profile (inline YAML), ReplayOptions::engine
  EngineConstants constants;
  double objective = 0;           // mean over the fit runs and their metrics of the APE (%)
  std::vector<std::string> runs;  // the runs it was fitted on
  std::string log;                // one line per evaluation
  std::string yaml;               // the `gpus:` entry and record to paste into an engine file
};

// Fits EngineConstants by coordinate search (shrinking steps, bounded: floors 0–5 ms / 0–10 ms,
// fraction 0.3–1, overhead 0–50 ms) from the constants of `base.engine` for the fit runs' GPU,
// minimising the mean APE over the fit runs' seven metrics. Fit runs: traced (exact), not
// overloaded, not in `held_out`; they must share one GPU.
FitResult fit_engine_constants(const std::vector<Experiment>& experiments,
                               const std::set<std::string>& held_out, const ReplayOptions& base,
                               const std::string& csv_path);

}  // namespace servesim::sim2real
