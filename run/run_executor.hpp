#pragma once

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "run/run_cache.hpp"
#include "run/simulation.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/run_observer.hpp"

namespace servesim {

struct RunOptions {
  std::string out_dir;        // "" = the config's output.dir or out/<name>
  bool write_outputs = true;  // false: summary only, in memory (sweeps, tests)
  // Where the progress line goes (the command's stderr on a terminal); nullptr: none.
  std::ostream* progress = nullptr;
  // > 0: run twice more (no outputs) with every step time × (1 ± sensitivity_delta) and add
  // summary["sensitivity"]: per latency metric, the % change per 1% of step-time error (gain).
  double sensitivity_delta = 0;
  RunCache* cache = nullptr;  // where the sensitivity runs get their catalog and cost model
  // When set: run band_draws times more (no outputs) with step times drawn from the error
  // model's range for the run's regime and add summary["bands"] (run/bands.hpp).
  const ErrorModel* error_model = nullptr;
  int band_draws = 5;
  // When set, receives each band draw's metrics summary (a sweep's pick per draw).
  std::vector<nlohmann::json>* band_draw_summaries = nullptr;
  // When set and true, the run stops at the next event and its outputs are the requests
  // simulated so far, summary["complete"] = false (see stop_on_signals).
  const std::atomic<bool>* stop = nullptr;
  // Further observers of the run (an embedding that keeps the records in memory), told after
  // the metrics and the output writers.
  std::vector<RunObserver*> observers;
  // Called on the running thread every 65,536 events and once at the end, after the progress
  // line: where an embedding checks for an interrupt and sets *stop.
  Engine::Progress on_progress;
};

// Runs `sim` to the end. Returns summary.json's document (also written when outputs are).
nlohmann::json execute_run(Simulation& sim, const RunOptions& options);

}  // namespace servesim
