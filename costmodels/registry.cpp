#include "costmodels/registry.hpp"

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/fixed/fixed_cost_model.hpp"
#include "costmodels/rf/rf_cost_model.hpp"
#include "costmodels/roofline/roofline_cost_model.hpp"
#include "sim/config/kind_table.hpp"

namespace servesim {

// The explicit table of cost models (no static self-registration). Keep sorted by kind.
const std::vector<CostModelEntry>& cost_model_entries() {
  // Capabilities: needs profiles, prices a power cap, engine profile.
  static const std::vector<CostModelEntry> entries{
      {"analytical",
       {false, true, true},
       [](const ConfigNode& n) -> std::unique_ptr<CostModel> {
         return std::make_unique<AnalyticalCostModel>(AnalyticalCostModel::parse(n));
       }},
      {"fixed",
       {false, false, false},
       [](const ConfigNode& n) -> std::unique_ptr<CostModel> {
         return std::make_unique<FixedCostModel>(FixedCostModel::parse(n));
       }},
      {"rf",
       {true, false, false},
       [](const ConfigNode& n) -> std::unique_ptr<CostModel> {
         return std::make_unique<RfCostModel>(RfCostModel::parse(n, RfCostModel::Kind::kVerbatim));
       }},
      {"rf_scaled",
       {true, false, false},
       [](const ConfigNode& n) -> std::unique_ptr<CostModel> {
         return std::make_unique<RfCostModel>(RfCostModel::parse(n, RfCostModel::Kind::kScaled));
       }},
      {"roofline",
       {false, false, false},
       [](const ConfigNode& n) -> std::unique_ptr<CostModel> {
         return std::make_unique<RooflineCostModel>(RooflineCostModel::parse(n));
       }},
  };
  return entries;
}

const CostModelEntry* find_cost_model(std::string_view kind) {
  for (const CostModelEntry& e : cost_model_entries()) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

std::unique_ptr<CostModel> make_cost_model(const ConfigNode& node) {
  node.require_map("a cost model section with a 'kind:' key");
  return lookup_kind(cost_model_entries(), node.at("kind"), "cost model").make(node);
}

std::vector<std::string> cost_model_kinds() { return kinds_of(cost_model_entries()); }

}  // namespace servesim
