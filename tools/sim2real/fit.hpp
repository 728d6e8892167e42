#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// The traced runs held out of every fit by default (comma-separated exp_ids).
std::string default_held_out();

// The serving-engine constants `sim2real --fit` fits for the fit runs' GPU (what
// configs/engines/*.yaml hold): host time of a CUDA-graph decode step and of an eager
// (prefill-carrying) step and the fraction of the memory bandwidth decode attention reaches —
// shared by every engine profile the fit runs use — and, per engine profile, the client-observed
// time of a request outside every step.
struct EngineConstants {
  double graph_floor_ns = 0;
  double eager_floor_ns = 0;
  double decode_bw_fraction = 0.7;
  std::map<std::string, double> request_overhead_ns;  // per engine profile name
  // `base` (an engine profile as read) with these constants for `gpu` and engine `name`, as an
  // inline YAML flow map; everything else in `base` is kept.
  std::string inline_yaml(const ConfigNode& base, const std::string& name,
                          const std::string& gpu) const;
};

// Checks a held-out set: every id names a run of the CSV and, unless `ids_only` (before a fit,
// whose substitutes are not known yet), no held-out run is replayed with an engine profile that
// was fitted on it (the profile's `fitted: {runs: …}`; a --fit substitute in
// `options.engine_substitutes` never is). Errors name the CSV line of the run.
void check_held_out(const std::vector<Experiment>& all, const std::set<std::string>& held_out,
                    const ReplayOptions& options, const std::string& csv_path, bool ids_only);

struct FitResult {
  std::string gpu;  // catalog name of the fit runs' GPU
  EngineConstants constants;
  std::map<std::string, std::string> engines;  // fitted profiles: name → inline YAML
  double objective = 0;           // mean over the fit runs and their metrics of the APE (%)
  std::vector<std::string> runs;  // the runs it was fitted on
  std::string log;                // one line per evaluation
  std::string yaml;               // per engine file, the entries to paste
};

// Fits EngineConstants by coordinate search (shrinking steps, bounded: floors 0–5 ms / 0–10 ms,
// fraction 0.3–0.9 (a streaming read's share of datasheet bandwidth), overheads 0–50 ms) from the
// hardware file's constants and no overhead (so the result does not depend on what the engine
// profiles hold), minimising the mean APE over the fit runs' seven metrics. Fit runs: traced
// (exact), not overloaded, not in `held_out`; they must share one GPU.
// `text` (an engine profile file) with engine `name`'s fitted constants for `gpu` and the fit's
// record: the `request_overhead_ns:`, `fitted:` lines and the GPU's `host:` / `analytical:` lines
// under `gpus:` are replaced (or added); every other line is kept.
std::string update_engine_file(const std::string& text, const std::string& name,
                               const std::string& gpu, const EngineConstants& c,
                               const FitResult& f);

// Writes every fitted profile back to its file (configs/engines/<name>.yaml under the catalog
// folders); returns the paths written.
std::vector<std::string> write_engine_files(const FitResult& f);

FitResult fit_engine_constants(const std::vector<Experiment>& experiments,
                               const std::set<std::string>& held_out, const ReplayOptions& base,
                               const std::string& csv_path);

}  // namespace servesim::sim2real
