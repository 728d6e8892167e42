#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// Builds the cost model named by `node["kind"]` from its config section. Unknown kinds and keys
// are InputErrors listing the valid values.
std::unique_ptr<CostModel> make_cost_model(const ConfigNode& node);
// Every registered kind, sorted (for --help and the contract test).
std::vector<std::string> cost_model_kinds();

}  // namespace servesim
