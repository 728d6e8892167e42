#include "tools/costmodel/rank_flips.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "run/bands.hpp"

namespace servesim::decide {
namespace {

// "h200 = h100-sxm < a100-80gb": the tiers of `p`, fastest first.
std::string order_text(const std::vector<Prediction>& p) {
  std::vector<std::string> parts;
  for (const auto& tier : tiers(p)) {
    std::vector<std::string> names;
    for (const std::size_t i : tier) names.push_back(p[i].gpu);
    parts.push_back(fmt::format("{}", fmt::join(names, " = ")));
  }
  return fmt::format("{}", fmt::join(parts, " < "));
}

}  // namespace

nlohmann::json rank_flips(const std::vector<Prediction>& p, const std::vector<const GpuSpec*>& gpus,
                          StepKind kind, const std::string& cost_model, const ErrorModel& model,
                          int draws) {
  std::vector<ErrorQuantiles> q;
  nlohmann::json missing = nlohmann::json::array();
  for (const GpuSpec* g : gpus) {
    const std::string cls = model.gpu_class(g->name);
    if (const auto e = model.find(cost_model, cls, kind)) {
      q.push_back(*e);
    } else {
      missing.push_back(
          fmt::format("{}/{}/{} ({})", cost_model, cls, step_kind_name(kind), g->name));
    }
  }
  if (!missing.empty()) return {{"status", "unmeasured"}, {"unmeasured", missing}};
  const std::string base = order_text(p);
  std::map<std::string, int> counts;
  for (int d = 0; d < draws; ++d) {
    const double u = band_level(0, d, static_cast<std::size_t>(kind));
    std::vector<Prediction> drawn = p;
    for (std::size_t i = 0; i < drawn.size(); ++i) drawn[i].time *= std::exp(q[i].log_ratio_at(u));
    ++counts[order_text(drawn)];
  }
  nlohmann::json out = {{"status", "measured"},
                        {"draws", draws},
                        {"holds", counts[base]},
                        {"others", nlohmann::json::array()}};
  for (const auto& [order, n] : counts) {
    if (order != base) out["others"].push_back({{"ranking", order}, {"draws", n}});
  }
  return out;
}

std::string rank_flips_text(const nlohmann::json& f) {
  if (f["status"] == "unmeasured") {
    std::vector<std::string> names;
    for (const auto& u : f["unmeasured"]) names.push_back(u.get<std::string>());
    return fmt::format("order unmeasured: no validation data for {}", fmt::join(names, ", "));
  }
  std::string out =
      fmt::format("order holds in {} of {} draws", f["holds"].get<int>(), f["draws"].get<int>());
  for (const auto& o : f["others"]) {
    out += fmt::format("; {} in {}", o["ranking"].get<std::string>(), o["draws"].get<int>());
  }
  return out;
}

}  // namespace servesim::decide
