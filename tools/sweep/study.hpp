#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/sweep/shards.hpp"

namespace servesim::sweep {

// What `sweep` was asked to do (tools/sweep/main.cpp parses the command line into it; README and
// tools/README.md describe each option).
struct SweepOptions {
  std::string config;
  std::vector<std::string> sets;    // --set, applied to every point first
  std::vector<std::string> varies;  // --vary KEY=SPEC
  bool zip = false;
  int seeds = 1;                      // --seeds N: replicates per point
  std::optional<std::uint64_t> seed;  // --seed: the first replicate's seed
  std::vector<int> threads;           // empty: all cores; several: a thread-scaling study
  std::vector<std::string> slos;      // --slo
  std::string pick;                   // --pick max:NAME | min:NAME ("" = none)
  std::string throughput = "output_tok_s";
  std::vector<std::string> baselines;  // --baseline KEY=VALUE[;KEY=VALUE…]
  std::vector<std::string> oracle;     // --oracle KEY=VALUE: the grid run again with these
  std::string max_rate;                // --max-rate KEY ("" = no capacity search)
  double rate_tol = 0.01;
  std::string out_dir;  // "" = out/<name>/sweep
  bool keep_runs = false;
  bool plots = true;
  bool quiet = false;
  bool progress = false;  // a progress bar on stderr
};

// Runs the sweep on `shards` (rank 0 writes the files and prints). Throws InputError for bad
// input, before any point runs. Returns the exit code.
int run_sweep(const SweepOptions& options, const Shards& shards);

}  // namespace servesim::sweep
