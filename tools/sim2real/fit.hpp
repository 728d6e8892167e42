#pragma once

#include <set>
#include <string>
#include <vector>

#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// The vLLM-V1 engine constants fitted on the traced runs (declared in the tool's README; their
// proper home is the `host:` section the analytical cost model reads, see the report):
// host time per step on top of the analytical cost model's own host floor.
// Fitted by `sim2real --fit` (coordinate search, mean over runs of the overall APE) on the traced
// runs tv-l2-7b-codegen, tv-l2-7b-roleplay and 1 (stage 0); held out: tv-l2-7b-general and 5.
// Both land on their bounds: vLLM V1 overlaps its host work with the GPU, so the analytical
// model's H100 host floors (graph 0.5 ms, eager 2 ms per step) should be 0 for V1; the request
// overhead fits to 0. Their proper home: `host: {graph_floor_ns: 0, eager_floor_ns: 0}` in a
// vLLM-V1 engine section for H100 (see the report).
inline constexpr double kFittedDecodeStepNs = -500e3;  // = graph host floor 0.5 ms → 0
inline constexpr double kFittedMixedStepNs = -2000e3;  // = eager host floor 2 ms → 0
inline constexpr double kFittedRequestOverheadNs = 0;
// The traced runs held out of every fit by default (comma-separated exp_ids).
std::string default_held_out();

struct FitResult {
  double decode_step_ns = 0;
  double mixed_step_ns = 0;
  double request_overhead_ns = 0;
  double decode_min_ns = 0;  // bounds: minus the analytical model's host floors
  double mixed_min_ns = 0;
  double objective = 0;           // mean over the fit runs of their overall APE (%)
  std::vector<std::string> runs;  // the runs it was fitted on
  std::string log;                // one line per evaluation
};

// Fits extra_decode_step_ns, extra_mixed_step_ns and request_overhead_ns by coordinate search on a
// grid, minimising the mean over the fit runs of each run's overall APE (the mean is smoother than
// the median of three runs). Fit runs: traced (exact), not overloaded, not in `held_out`.
FitResult fit_host_constants(const std::vector<Experiment>& experiments,
                             const std::set<std::string>& held_out, const ReplayOptions& base,
                             const std::string& csv_path);

}  // namespace servesim::sim2real
