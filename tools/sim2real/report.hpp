#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

// Which medians a run counts in.
enum class ScoreSet { kFit, kHeldOut, kApproximate, kOverloaded };
const char* score_set_name(ScoreSet s);
ScoreSet score_set(const RunResult& r, const std::set<std::string>& held_out);

// The medians of one set of runs (NaN-free: empty sets are omitted).
struct SetSummary {
  ScoreSet set;
  MedianScore median;
};

struct Report {
  std::vector<RunResult> runs;
  std::set<std::string> held_out;
  ReplayOptions options;
  MedianScore median;  // every non-overloaded run
  std::vector<SetSummary> sets;
};

// Fills the medians of `report` from its runs.
void summarize(Report& report);
// The table printed on stdout.
std::string format_table(const Report& report);
// The --json document: {"runs": [...], "median": {...}, "median_by_set": {...}, "options": …}.
nlohmann::json to_json(const Report& report);

}  // namespace servesim::sim2real
