#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace servesim {

// The human-readable table of a run's summary.json document, as `simulate` prints it.
std::string format_summary_table(const nlohmann::json& summary);

}  // namespace servesim
