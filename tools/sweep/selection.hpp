#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::sweep {

// What the selector reads: one value per point and column (NaN = no value). Columns are the
// metric names (means over a point's seeds) and the numeric varied keys.
class PointTable {
 public:
  PointTable(std::vector<std::string> columns, std::vector<std::vector<double>> rows);
  std::optional<std::size_t> column(const std::string& name) const;
  const std::vector<std::string>& columns() const { return columns_; }
  double at(std::size_t point, std::size_t column) const { return rows_[point][column]; }
  std::size_t size() const { return rows_.size(); }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<double>> rows_;
};

// One `--slo` flag: METRIC<=V (also written METRIC=V) or METRIC>=V. V may be a list
// (tbt_p99_ms=25,30,50): the selection is then made once per value.
struct SloBound {
  std::string metric;
  bool at_least = false;
  std::vector<double> values;
  std::string text;  // the flag's argument
};
// Parses a --slo argument; `columns` are the names it may bound (the error lists them).
SloBound parse_slo(const std::string& arg, const std::vector<std::string>& columns);

// `--pick max:NAME | min:NAME`: the column to maximise or minimise.
struct Objective {
  bool maximize = true;
  std::string column;
};
Objective parse_pick(const std::string& arg, const std::vector<std::string>& columns);

// One bound with one value, resolved to a column.
struct Bound {
  std::size_t column = 0;
  bool at_least = false;
  double value = 0;
};
// Whether `point` meets every bound (a NaN value meets none).
bool meets(const PointTable& t, std::size_t point, const std::vector<Bound>& bounds);
// How far inside the bound the point is, as a fraction of the bound: (bound − value)/|bound| for
// an upper bound, (value − bound)/|bound| for a lower one; ≥ 0 when met, < 0 when broken (the
// raw difference where the bound is 0).
double slack(const PointTable& t, std::size_t point, const Bound& bound);

// The best point that meets every bound and the next best (runner-up). Points with a NaN
// objective are never chosen; equal objectives go to the earlier point (grid order), so a tie
// has one deterministic answer. `closest`: when nothing meets, the point whose worst slack is
// least negative (what comes nearest), else none.
struct Choice {
  std::optional<std::size_t> best;
  std::optional<std::size_t> runner_up;
  std::optional<std::size_t> closest;
};
Choice choose(const PointTable& t, const std::vector<Bound>& bounds, std::size_t objective,
              bool maximize);

// A static choice scored beside the pick (`--baseline KEY=VALUE`): its label and grid point.
struct Baseline {
  std::string label;
  std::size_t point = 0;
};

// The whole decision: one selection per SLO setting (the values of the one listed --slo, or the
// single setting), scored on `oracle` when given (the same grid priced another way, e.g. by a
// measured profile): per setting the pick, runner-up, each bound's value and slack, the oracle's
// own pick, whether the pick honours the SLO on the oracle, its throughput as a fraction of the
// oracle's pick, and the baselines' honour and throughput fraction; over the settings, honour
// rates, mean fractions and the Spearman correlation between the two tables of every bounded
// metric. `describe(p)` names a point in the output. Throws InputError when more than one --slo has
// a list.
struct SelectionSpec {
  std::vector<SloBound> slos;
  Objective objective;
  std::string throughput = "output_tok_s";  // the column fractions are taken of
  std::vector<Baseline> baselines;
};
nlohmann::json select_study(const SelectionSpec& spec, const PointTable& table,
                            const PointTable* oracle,
                            const std::vector<nlohmann::json>& point_values);
// The selection as the table `sweep` prints.
std::string format_selection(const nlohmann::json& selection);

}  // namespace servesim::sweep
