#pragma once

#include <string>
#include <vector>

#include "tools/sim2real/mlenergy.hpp"
#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// `sim2real --mlenergy FILE…`: reads every file, replays every row, writes each row's config and
// report.json into `out_dir` (when given) and prints the report (a table, or JSON with `json`),
// drawing it into `plot_file` when given. Returns the exit code.
int run_mlenergy_command(const std::vector<std::string>& files, EnergyReplayOptions energy,
                         const ReplayOptions& options, const std::string& out_dir, bool json,
                         const std::string& plot_file);

}  // namespace servesim::sim2real
