#pragma once

#include <string>

#include "tools/sim2real/silicon.hpp"

namespace servesim::sim2real {

struct SiliconCommandArgs {
  std::string out_dir;      // each run's config and report.json; "" = none
  bool json = false;        // the report as JSON instead of the table
  std::string plot_file;    // signed error by concurrency per engine; "" = none
  std::string fit_backend;  // fit this backend's engine profile first; "" = none
  bool frontier = false;    // also compare servesim's picks with the measured frontier
};

// `sim2real --silicon FILE`: reads the file; with a fit backend, fits that engine profile on its
// declared fit rows (the constants to paste go to stdout, the search to stderr) and replays with
// them; replays every row servesim can express (with `frontier`, adds the frontier comparison,
// silicon_frontier.hpp, to the report), writes each run's config and report.json into
// the output folder (when given), prints the report and draws the plot. Returns the exit code.
int run_silicon_command(const std::string& file, SiliconOptions options,
                        const SiliconCommandArgs& args);

}  // namespace servesim::sim2real
