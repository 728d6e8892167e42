#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// The human-readable table of a run's summary.json document, as `simulate` prints it.
std::string format_summary_table(const nlohmann::json& summary);

// The console lines of summary["bands"] (the summary table's "bands" rows).
std::string format_bands(const nlohmann::json& bands);

// What the tools say of a GPU with no measurement of its own: whether any GPU of its class
// (`arch`, GDDR or HBM) was measured (`checked_on`, from Catalog::class_checked_on).
std::string price_class_note(const std::string& arch, const std::string& memory_type,
                             const std::vector<std::string>& checked_on);

}  // namespace servesim
