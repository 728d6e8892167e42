#pragma once

#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sim2real/silicon.hpp"

namespace servesim::sim2real {

// A row's place on the throughput frontier, from its mean TTFT and TPOT (measured or simulated):
// per-user speed 1000 / TPOT tokens/s, and output tokens/s per GPU
//   concurrency × L / (TTFT + (L − 1) × TPOT) / GPUs,
// L the client's mean output length (the OSL for fixed lengths, (⌊0.8 OSL⌋ + OSL) / 2 for
// InferenceX's lengths uniform in [⌊0.8 OSL⌋, OSL]), every time in seconds.
struct FrontierPoint {
  double tokens_per_s_per_user = 0;
  double tokens_per_s_per_gpu = 0;
};
FrontierPoint frontier_point(const SiliconRow& row, std::int64_t gpus, double ttft_ms,
                             double tpot_ms);

// The per-user speeds (tokens/s) a group's configurations are compared at.
inline constexpr double kFrontierBounds[] = {10, 20, 35, 50, 75, 100, 150, 200};

// servesim's pick among a file's measured configurations against the measured frontier. Rows are
// grouped by the catalog's model (a quantized checkpoint's base model), system and ISL/OSL
// (engines, precisions, layouts, modes and concurrencies are the choices); a group with at least 5
// rows run outside every fit set is compared at each bound some measured row meets: the pick is the
// row of most simulated tokens/s/GPU among those whose simulated speed meets the bound, the best
// the row of most measured tokens/s/GPU among those whose measured speed does. A pick lands within
// 10% when its measured tokens/s/GPU is at least 90% of the best's and its measured speed at least
// 90% of the bound. The JSON: groups, cases[] (group, bound, best and pick with their measured
// points, gap_pct, within_10pct) and share_within_10pct_among_measured.
//
// With `plan` (search_layouts, or a stand-in in tests), each group is also planned: the query is
// the group's model, system, ISL/OSL, engines, formats and modes, its budget the most GPUs a
// row of it runs on, its concurrencies up to the highest a row was measured at; at each bound
// plan's pick (layout_pick) is looked up among the group's measured rows, the same layout at the
// nearest concurrency, else the nearest layout (layout_distance) at the nearest concurrency, and
// judged as the pick among measured ones is. Cases then carry `plan` (label, simulated point, row,
// match, gap_pct, within_10pct) and share_within_10pct is plan's; share_within_10pct_among_measured
// is always the pick's among the measured configurations.
struct LayoutQuery;
struct LayoutSearch;
using LayoutPlanner = std::function<LayoutSearch(const LayoutQuery&)>;
nlohmann::json silicon_frontier_json(const std::vector<SiliconResult>& results,
                                     const SiliconOptions& options,
                                     const LayoutPlanner& plan = nullptr);
std::string silicon_frontier_table(const nlohmann::json& frontier);

}  // namespace servesim::sim2real
