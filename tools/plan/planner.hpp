#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "run/prices.hpp"
#include "run/run_cache.hpp"
#include "run/run_config_loader.hpp"
#include "sim/config/run_config.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/constants.hpp"
#include "tools/common/progress.hpp"
#include "tools/plan/plan.hpp"
#include "tools/plan/plan_bands.hpp"
#include "tools/sweep/grid.hpp"
#include "tools/sweep/selection.hpp"

// The planner's search, shared by its two source files (plan.cpp: candidates, the search and the
// bands; plan_report.cpp: plan.json and the printed report). Not part of the plan library's API.
namespace servesim::decide::detail {

// One fleet kind: a GPU at a TP degree with one setting of the --vary keys, 1 … max_replicas
// replicas of it.
struct Candidate {
  const GpuSpec* gpu = nullptr;
  int tp = 1;
  std::size_t setting = 0;  // grid point of the --vary keys
  int max_replicas = 0;
  std::string cannot;  // why it cannot be built at all ("" = it can)
};

// One fleet simulated: `replicas` replicas of a candidate.
struct Point {
  std::size_t candidate = 0;
  int replicas = 0;
  std::vector<double> means;  // over the seeds, per metric_names()
  bool meets = false;
  double objective = 0;
  double usd_per_hour = kNaN;
  int gpus = 0;
  double power_w = 0;
};

class Planner {
 public:
  explicit Planner(const PlanOptions& o);

  PlanReport run();

 private:
  std::vector<std::string> catalog_dirs() const;

  std::vector<ConfigOverride> overrides(const Candidate& c, int replicas) const;

  Point evaluate(std::size_t ci, int replicas, Progress& progress);

  // The least replica count of candidate `ci` that meets: doubling from 1, then bisection
  // between the last count that fails and the first that meets (or every count, exhaustive).
  void search(std::size_t ci, Progress& progress);

  const Point* least_meeting(std::size_t ci) const;

  // "h200 TP2" or, with --vary keys, "h200 TP2 (scheduler.chunk_size=512)".
  std::string label(const Candidate& c) const;

  std::string fleet(const Point& p) const;

  std::string objective_text(double v) const;

  // What a failing fleet misses: each broken bound with its value.
  std::string misses(const Point& p) const;

  // The worst slack over the bounds (< 0: broken by that fraction).
  double worst_slack(const Point& p) const;

  nlohmann::json setting_json(const Candidate& c) const;

  nlohmann::json point_json(const Point& p) const;

  // Every simulated fleet, in candidate then replica order.
  std::vector<const Point*> all_points() const;

  // The fleets no other fleet beats on both the objective and the first bound's metric (the
  // cost-vs-SLO frontier), by increasing objective.
  std::vector<const Point*> frontier() const;

  // The least-objective fleet that meets; ties go to fewer GPUs, then to the earlier candidate.
  const Point* pick() const;

  // The fleet that comes nearest to meeting (least negative worst slack).
  const Point* closest() const;

  nlohmann::json report() const;

  std::string text(const nlohmann::json& doc) const;

  // The most replicas of candidate `ci` whose objective is below the pick's (0: none).
  int cheaper_count(std::size_t ci, const Point& pick) const;

  BandFleet band_fleet(std::size_t ci, int replicas) const;

  // plan.json "bands" (--bands): the pick and, per candidate, its most replicas cheaper than the
  // pick, each rerun under the error model's draws (tools/plan/plan_bands.hpp).
  nlohmann::json bands(int threads);

  void write_points_csv() const;

  const PlanOptions& o_;
  RunConfig base_;
  sweep::Grid grid_;
  std::vector<sweep::Bound> bounds_;
  std::string group_prefix_;
  std::shared_ptr<Catalog> catalog_;
  std::unique_ptr<Prices> prices_;
  std::vector<Candidate> candidates_;
  std::vector<std::vector<Point>> points_;  // per candidate, by replica count
  RunCache cache_;
  std::optional<ErrorModel> errors_;  // --bands
  std::atomic<std::size_t> cut_{0};   // runs skipped or stopped by PlanOptions::stop
  std::string dir_;
  double wall_s_ = 0;
};

}  // namespace servesim::decide::detail
