#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <ostream>
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
  bool bands = false;                  // --bands: count the pick's flips over the band draws
  int band_draws = 5;                  // --band-draws
  std::string error_model;             // --error-model ("" = data/measured/error_model.yaml)
  double rate_tol = 0.01;
  std::string out_dir;  // "" = out/<name>/sweep
  bool keep_runs = false;
  bool plots = true;
  bool quiet = false;
  std::ostream* progress = nullptr;  // where the progress bar goes (the command's stderr), or none
  // Once set (a signal, Python's Ctrl-C), runs not yet started are skipped and running ones stop
  // at their next progress point; neither counts as a result (its metrics are NaN), and the
  // files are written with the runs done by then (SweepReport::complete false).
  const std::atomic<bool>* stop = nullptr;
};

// What a sweep did, for the command to print (rank 0's; the other ranks' reports are empty).
struct SweepReport {
  bool writer = false;    // this rank wrote the files (rank 0)
  std::string dir;        // the folder of the files
  std::string plot_mode;  // tools/plot.py's mode for the folder: "sweep" or "capacity"
  // The points or capacity table, the selection and the thread scaling, as printed (empty when
  // options.quiet).
  std::string tables;
  std::size_t runs = 0;  // runs of the last pass
  double wall_s = 0;     // wall time of the last pass
  int threads = 1;       // threads of the last pass
  int ranks = 1;
  bool identical = true;  // false: results differed between thread counts (a bug)
  bool complete = true;   // false: stopped (SweepOptions::stop); `cut` runs did not finish
  std::size_t cut = 0;
};

// Runs the sweep on `shards` (rank 0 writes the files). Throws InputError for bad input, before
// any point runs.
SweepReport run_sweep(const SweepOptions& options, const Shards& shards);

}  // namespace servesim::sweep
