#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sweep/grid.hpp"
#include "tools/sweep/run_request.hpp"
#include "tools/sweep/study.hpp"

namespace servesim::sweep {

// The result files a finished sweep writes into its folder (points.*, means.csv, capacity.*,
// timing.csv), each returning the table the command prints from it (empty when quiet).
class ResultFiles {
 public:
  // `shown`: the metrics the printed table of points has a column for, after the varied keys.
  ResultFiles(const SweepOptions& o, const Grid& grid, std::string name, std::string dir,
              std::vector<std::string> shown)
      : o_(o),
        grid_(grid),
        name_(std::move(name)),
        dir_(std::move(dir)),
        shown_(std::move(shown)) {}

  // points.csv / means.csv (and the oracle's), points.json from every request's outcome (the
  // oracle's after the grid's, each point's seeds together).
  std::string write_points(const std::vector<RunRequest>& requests,
                           const std::vector<RunOutcome>& outcomes) const;
  // capacity.csv and capacity.json from each point's capacity search.
  std::string write_capacity(const std::vector<nlohmann::json>& capacity) const;
  // timing.csv: wall time per run, kept out of points.* so that those do not depend on the machine.
  void write_timing(const std::vector<RunRequest>& requests,
                    const std::vector<RunOutcome>& outcomes, std::size_t runs,
                    double total_wall_s) const;
  // Per grid point, its varied values as JSON ({key: value}).
  std::vector<nlohmann::json> point_values() const;
  // The printed table of a --threads list's passes.
  static std::string format_scaling(const nlohmann::json& scaling);

 private:
  std::string csv_header(const char* after_axes) const;
  std::string csv_axes(std::size_t p) const;
  static std::string indented(const std::string& text, int by);
  std::string table_header() const;
  std::string table_row(const nlohmann::json& p) const;

  const SweepOptions& o_;
  const Grid& grid_;
  std::string name_;
  std::string dir_;
  std::vector<std::string> shown_;
};

}  // namespace servesim::sweep
