#include "costmodels/registry.hpp"

#include <algorithm>
#include <functional>
#include <string_view>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/fixed/fixed_cost_model.hpp"
#include "costmodels/rf/rf_cost_model.hpp"
#include "costmodels/roofline/roofline_cost_model.hpp"
#include "sim/config/suggest.hpp"

namespace servesim {
namespace {

struct Entry {
  std::string_view kind;
  std::function<std::unique_ptr<CostModel>(const ConfigNode&)> make;
};

// The explicit table of cost models (no static self-registration). Keep sorted by kind.
const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"analytical",
       [](const ConfigNode& n) {
         return std::make_unique<AnalyticalCostModel>(AnalyticalCostModel::parse(n));
       }},
      {"fixed",
       [](const ConfigNode& n) {
         return std::make_unique<FixedCostModel>(FixedCostModel::parse(n));
       }},
      {"rf",
       [](const ConfigNode& n) {
         return std::make_unique<RfCostModel>(RfCostModel::parse(n, RfCostModel::Kind::kVerbatim));
       }},
      {"rf_scaled",
       [](const ConfigNode& n) {
         return std::make_unique<RfCostModel>(RfCostModel::parse(n, RfCostModel::Kind::kScaled));
       }},
      {"roofline",
       [](const ConfigNode& n) {
         return std::make_unique<RooflineCostModel>(RooflineCostModel::parse(n));
       }},
  };
  return entries;
}

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const ConfigNode& node) {
  node.require_map("a cost model section with a 'kind:' key");
  const ConfigNode kind_node = node.at("kind");
  const std::string kind = kind_node.as_string();
  for (const Entry& e : table()) {
    if (e.kind == kind) return e.make(node);
  }
  std::string known;
  for (const std::string& k : cost_model_kinds()) known += (known.empty() ? "" : ", ") + k;
  kind_node.fail("unknown cost model '" + kind + "' (" + did_you_mean(kind, cost_model_kinds()) +
                 "known: " + known + ")");
}

std::vector<std::string> cost_model_kinds() {
  std::vector<std::string> kinds;
  for (const Entry& e : table()) kinds.emplace_back(e.kind);
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

}  // namespace servesim
