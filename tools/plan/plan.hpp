#pragma once

#include <atomic>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace servesim::decide {

// `plan`: the cheapest fleet that serves a workload within its SLOs (tools/README.md#plan).
struct PlanOptions {
  std::string config;                   // the workload and serving setup; its replicas are replaced
  std::vector<std::string> sets;        // --set, applied first
  std::vector<std::string> varies;      // --vary KEY=VALUES: settings searched with each fleet
  std::vector<std::string> gpus;        // GPU kinds to consider
  std::vector<int> tps = {1, 2, 4, 8};  // TP degrees; those the model or --max-gpus rule out drop
  int max_gpus = 16;                    // GPUs in one fleet at the most
  std::vector<std::string> slos;   // what the fleet must meet (sweep's --slo syntax, one value)
  std::string objective = "cost";  // cost | gpus | power
  std::string prices;              // price file (default configs/prices/on-demand.yaml)
  std::vector<std::string> price_overrides;  // --price GPU=USD
  int seeds = 1;                             // runs per fleet; the SLOs are met on their means
  bool exhaustive = false;                   // every replica count, not the monotone search
  int threads = 0;                           // 0 = all cores
  std::string out_dir;                       // "" = out/<name>/plan
  bool plots = true;
  bool quiet = false;
  // --bands: after the search, rerun the pick and each fleet cheaper than it under band_draws
  // draws of the error model (default data/measured/error_model.yaml) and state in how many each
  // meets every SLO (plan.json "bands"). Off: the plan is unchanged.
  bool bands = false;
  int band_draws = 5;
  std::string error_model;  // set: --bands with this error model
  // --split: also plan two length-split pools at each of these prompt-length thresholds
  // (tools/plan/plan_split.hpp); empty: one pool only.
  std::vector<int> split;
  std::ostream* progress = nullptr;  // where the progress bar goes (the command's stderr), or none
  // Once set (a signal, Python's Ctrl-C), fleets not yet run are skipped and running runs stop;
  // neither meets (its metrics are NaN), and the files say so (PlanReport::complete false).
  const std::atomic<bool>* stop = nullptr;
};

// What a plan found, for the command to print.
struct PlanReport {
  std::string dir;       // the folder of plan.json and points.csv (tools/plot.py plan draws it)
  std::string text;      // the plan as printed (empty when options.quiet)
  bool complete = true;  // false: stopped (PlanOptions::stop); `cut` runs did not finish
  std::size_t cut = 0;
};

// Searches GPU kind × TP degree × the --vary settings × replica count for the fleet with the least
// objective whose simulated metrics (means over the seeds) meet every SLO, and writes plan.json
// and points.csv. Per (GPU, TP) the least replica count that meets is found by doubling
// then bisection (more replicas of one kind never serve worse: the search relies on it and says
// so), or with `exhaustive` by trying every count. Throws InputError for bad input.
PlanReport run_plan(const PlanOptions& options);

}  // namespace servesim::decide
