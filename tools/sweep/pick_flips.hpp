#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sweep/selection.hpp"

namespace servesim::sweep {

// How often a sweep's pick holds across the band draws (`sweep --pick … --bands`): the selection
// of `spec` made again on each draw's table (the grid with step times drawn from the error
// model). Per SLO setting: the pick on the unperturbed table, the draws in which the same point
// is picked, and every other point picked in some draw with its count ("none" when no point
// meets the bounds in a draw).
nlohmann::json pick_flips(const SelectionSpec& spec, const PointTable& table,
                          const std::vector<PointTable>& draws,
                          const std::vector<nlohmann::json>& point_values);
// Per grid point, for each of `columns`: {low, high} over the point's value in `table` and in every
// draw (null where any is missing): the whiskers of the sweep frontier picture.
nlohmann::json band_ranges(const PointTable& table, const std::vector<PointTable>& draws,
                           const std::vector<std::string>& columns);
// "pick scheduler.chunk_size=1024 holds in 4 of 5 draws; 768 in 1" lines.
std::string format_pick_flips(const nlohmann::json& flips);

}  // namespace servesim::sweep
