#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "run/run_builder.hpp"
#include "run/run_cache.hpp"
#include "tools/sweep/selection.hpp"

namespace servesim::decide {

// One fleet whose SLO verdict `plan --bands` retests under the error model's band draws: the
// pick, or a fleet cheaper than it (which the search found to miss).
struct BandFleet {
  std::string fleet;  // "3 × h200 TP1"
  std::string gpu;
  int tp = 1;
  int replicas = 0;
  double objective = 0;
  // The fleet's run config for seed index s (the plan's seed + s), as the search ran it.
  std::function<RunConfig(int)> config;
};

// What to retest and how.
struct PlanBandsRequest {
  BandFleet pick;
  std::vector<BandFleet> cheaper;  // by decreasing objective: the nearest to the pick first
  int seeds = 1;                   // the verdict holds on the means over the seeds, as the search
  const ErrorModel* model = nullptr;
  int draws = 5;
  std::vector<sweep::Bound> bounds;
  RunCache* cache = nullptr;
  const std::atomic<bool>* stop = nullptr;  // once set, fleets not yet run are "stopped"
  int threads = 1;
};

// plan.json "bands": per fleet, in how many draws its means over the seeds meet every bound
// (each draw scales step times per step kind as `simulate --bands` does, tools/common/bands.hpp),
// or "unmeasured" with the regimes that have no data (no count), or "stopped". `near_tie` is true
// when the pick misses in some draw or a cheaper fleet meets in some draw; null when the pick's
// regime is unmeasured. Deterministic for the plan's seed.
nlohmann::json plan_bands(const PlanBandsRequest& request);

// The console lines of plan.json "bands".
std::string format_plan_bands(const nlohmann::json& bands);

}  // namespace servesim::decide
