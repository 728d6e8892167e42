#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "run/run_config_loader.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep {

// One run of the sweep: a grid point's replicate, of the main grid or the oracle's.
struct RunRequest {
  std::size_t point = 0;
  std::size_t replicate = 0;
  bool oracle = false;
  std::vector<ConfigOverride> overrides;
  std::uint64_t seed = 0;
};

struct RunOutcome {
  std::vector<double> metrics;
  std::vector<std::vector<double>> band_metrics;  // per band draw (--bands), as `metrics`
  double wall_s = 0;
};

// The command that reruns a request alone: `simulate` with the same overrides and seed.
inline std::string command_of(const std::string& config, const RunRequest& r) {
  std::string cmd = "simulate " + shell_quote(config);
  for (const auto& o : r.overrides) cmd += " --set " + shell_quote(o.assignment);
  return cmd + fmt::format(" --seed {}", r.seed);
}

// The folder of a request's own outputs (--keep-runs) under the sweep's folder `dir`.
inline std::string run_dir(const std::string& dir, const RunRequest& r) {
  return (std::filesystem::path(dir) / "runs" /
          fmt::format("{}p{:04}_s{}", r.oracle ? "oracle_" : "", r.point, r.seed))
      .string();
}

}  // namespace servesim::sweep
