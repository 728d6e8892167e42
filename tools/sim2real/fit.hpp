#pragma once

#include <set>
#include <string>
#include <vector>

#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// The vLLM-V1 engine constants fitted on the traced runs (declared in the tool's README; their
// proper home is the `host:` section the analytical cost model reads, see the report):
// host time per step on top of the analytical cost model's own host floor.
inline constexpr double kFittedDecodeStepNs = 0;
inline constexpr double kFittedMixedStepNs = 0;
// The traced runs held out of every fit by default (comma-separated exp_ids).
std::string default_held_out();

struct FitResult {
  double decode_step_ns = 0;
  double mixed_step_ns = 0;
  double objective = 0;           // mean over the fit runs of their overall APE (%)
  std::vector<std::string> runs;  // the runs it was fitted on
  std::string log;                // one line per evaluation
};

// Fits extra_decode_step_ns and extra_mixed_step_ns by coordinate search on a grid, minimising
// the mean over the fit runs of each run's overall APE (the mean is smoother than the median of
// three runs). Fit runs: traced (exact), not
// overloaded, not in `held_out`.
FitResult fit_host_constants(const std::vector<Experiment>& experiments,
                             const std::set<std::string>& held_out, const ReplayOptions& base,
                             const std::string& csv_path);

}  // namespace servesim::sim2real
