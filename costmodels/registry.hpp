#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// What a cost model kind can do or needs beyond the CostModel interface.
struct CostModelCapabilities {
  // Trained on measured profiles: its section needs `gpu:` (the profiled GPU) and `profiles:`.
  bool needs_profiles = false;
  // Prices a GPU power cap (CostModel::prices_power_cap of the models it builds).
  bool prices_power_cap = false;
  // Its section may carry an `engine:` profile of the serving engine's semantics.
  bool engine_profile = false;
};

// One cost model kind of the registry (costmodels/registry.cpp).
struct CostModelEntry {
  std::string_view kind;
  CostModelCapabilities capabilities;
  // Parses its section (unknown keys are errors) and builds it.
  std::unique_ptr<CostModel> (*make)(const ConfigNode& node);
};

// Every entry, sorted by kind.
const std::vector<CostModelEntry>& cost_model_entries();
// The entry of `kind`, or nullptr when there is none.
const CostModelEntry* find_cost_model(std::string_view kind);
// Builds the cost model named by `node["kind"]` from its config section. Unknown kinds and keys
// are InputErrors listing the valid values.
std::unique_ptr<CostModel> make_cost_model(const ConfigNode& node);
// Every registered kind, sorted (for --help and the contract test).
std::vector<std::string> cost_model_kinds();

}  // namespace servesim
