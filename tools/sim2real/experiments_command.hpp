#pragma once

#include <string>

#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// What `sim2real --experiments CSV` was asked to do (main.cpp parses the command line into it).
struct ExperimentsArgs {
  std::string csv;       // --experiments
  std::string only;      // --only: comma-separated run ids ("" = all)
  std::string out_dir;   // --out: each run's config and report.json ("" = none)
  std::string held_out;  // --held-out: comma-separated run ids kept out of any fit
  bool json = false;     // print the report as JSON instead of the table
  bool fit = false;      // fit the engine constants first and report with them
  bool write = false;    // with fit: write them into configs/engines/
  bool no_prefix_caching = false;
  double sensitivity_pct = 2;
  std::string plot_file;  // --plot ("" = none)
};

// `sim2real --experiments CSV`: replays the selected runs of experiments.csv (after a fit when
// asked), scores them and prints the report. Returns the exit code (2 without --experiments).
int run_experiments_command(const ExperimentsArgs& a, ReplayOptions options);

}  // namespace servesim::sim2real
