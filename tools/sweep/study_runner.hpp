#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "run/run_cache.hpp"
#include "sim/config/run_config.hpp"
#include "tools/common/progress.hpp"
#include "tools/sweep/capacity.hpp"
#include "tools/sweep/grid.hpp"
#include "tools/sweep/result_files.hpp"
#include "tools/sweep/run_request.hpp"
#include "tools/sweep/selection.hpp"
#include "tools/sweep/shards.hpp"
#include "tools/sweep/study.hpp"

// The sweep study's runner, shared by its two source files (study.cpp: the grid and the
// selection; study_capacity.cpp: the --max-rate search). Not part of the sweep library's API.
namespace servesim::sweep::detail {

// Everything the study needs to run its points.
class Study {
 public:
  Study(const SweepOptions& o, const Shards& shards);

  SweepReport run();

 private:
  RunRequest request(std::size_t point, std::size_t replicate, bool oracle) const;

  // "point 3 (key=value, …)" for messages.
  std::string label(std::size_t point) const;

  // Builds every point (and its oracle twin) with its first seed and prices one step on every
  // replica (a cost model that loads tables on first use loads them now), so nothing runs unless
  // every point is valid. Every invalid point is reported, in grid order.
  void validate();

  double rate_of(const RunConfig& config) const;

  void clear_outputs() const;

  bool stopped() const { return o_.stop != nullptr && o_.stop->load(); }

  RunOutcome execute(const RunRequest& r);

  // Runs `requests` (this rank's share) in parallel; returns their outcomes gathered on rank 0 in
  // request order.
  std::vector<RunOutcome> run_all(const std::vector<RunRequest>& requests, int threads,
                                  Progress& progress);

  // The bytes that must not depend on the thread count: every run's metrics.
  static std::string fingerprint(const std::vector<RunOutcome>& outcomes);

  std::string run_grid(int threads);

  // Per grid point, the mean over its seeds of every metric of band draw `draw` (none: the
  // draws of a point whose regime is unmeasured).
  std::optional<PointTable> draw_table(std::size_t draw) const;

  // Per grid point, the mean over its seeds of every metric; `oracle` selects the oracle grid.
  PointTable table(bool oracle) const;

  // The printed table of points: the varied values and the metrics a reader looks at first
  // (with ± the 95% CI half-width when there are several seeds).
  std::vector<std::string> shown_metrics() const;

  void write_selection(const ResultFiles& files);

  // --max-rate: one bisection per grid point, each rate run with every seed; points in parallel.
  std::string run_capacity(int threads);

  // One point's capacity search (run_capacity's item).
  nlohmann::json search_point(std::size_t p, const std::vector<Bound>& bounds, Progress& progress,
                              std::atomic<std::size_t>& runs);

  const SweepOptions& o_;
  const Shards& shards_;
  RunConfig base_;
  Grid grid_;
  std::vector<std::string> columns_;
  std::vector<SloBound> slos_;
  std::optional<Objective> objective_;
  std::optional<ErrorModel> errors_;  // --bands
  std::vector<Baseline> baselines_;
  std::string dir_;
  std::string tables_;  // what the command prints, in order
  RunCache cache_;
  std::vector<RunRequest> requests_;
  std::vector<RunOutcome> outcomes_;
  std::vector<nlohmann::json> capacity_;
  std::size_t runs_done_ = 0;
  std::atomic<std::size_t> cut_{0};  // runs skipped or stopped by SweepOptions::stop
  double total_wall_ = 0;
  int threads_used_ = 1;
};

}  // namespace servesim::sweep::detail
