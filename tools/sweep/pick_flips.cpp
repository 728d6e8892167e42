#include "tools/sweep/pick_flips.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace servesim::sweep {
namespace {

// The pick of each setting of a selection: its point label, or "none".
std::vector<std::string> picks(const nlohmann::json& selection) {
  std::vector<std::string> out;
  for (const auto& s : selection["settings"]) {
    out.push_back(s["pick"].is_null() ? std::string("none") : s["pick"]["values"].dump());
  }
  return out;
}

// {"scheduler.chunk_size": "1024"} → "scheduler.chunk_size=1024"; "none" stays.
std::string label(const std::string& values) {
  if (values == "none") return values;
  const auto j = nlohmann::json::parse(values);
  std::string out;
  for (const auto& [k, v] : j.items()) {
    out += (out.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

}  // namespace

nlohmann::json pick_flips(const SelectionSpec& spec, const PointTable& table,
                          const std::vector<PointTable>& draws,
                          const std::vector<nlohmann::json>& point_values) {
  const nlohmann::json selection = select_study(spec, table, nullptr, point_values);
  const std::vector<std::string> base = picks(selection);
  std::vector<std::map<std::string, int>> counts(base.size());
  for (const PointTable& d : draws) {
    const std::vector<std::string> p = picks(select_study(spec, d, nullptr, point_values));
    for (std::size_t i = 0; i < base.size(); ++i) ++counts[i][p[i]];
  }
  nlohmann::json out = {{"draws", draws.size()}, {"settings", nlohmann::json::array()}};
  for (std::size_t i = 0; i < base.size(); ++i) {
    std::string slo;
    for (const auto& b : selection["settings"][i]["bounds"]) {
      slo += fmt::format("{}{} {} {:g}", slo.empty() ? "" : ", ", b["metric"].get<std::string>(),
                         b["op"].get<std::string>(), b["bound"].get<double>());
    }
    nlohmann::json s = {{"slo", slo},
                        {"pick", label(base[i])},
                        {"holds", counts[i][base[i]]},
                        {"others", nlohmann::json::array()}};
    for (const auto& [values, n] : counts[i]) {
      if (values != base[i]) s["others"].push_back({{"pick", label(values)}, {"draws", n}});
    }
    out["settings"].push_back(s);
  }
  return out;
}

nlohmann::json band_ranges(const PointTable& table, const std::vector<PointTable>& draws,
                           const std::vector<std::string>& columns) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t p = 0; p < table.size(); ++p) {
    nlohmann::json point = nlohmann::json::object();
    for (const std::string& name : columns) {
      const auto c = table.column(name);
      if (!c) continue;
      double lo = table.at(p, *c), hi = lo;
      for (const PointTable& d : draws) {
        lo = std::min(lo, d.at(p, *c));
        hi = std::max(hi, d.at(p, *c));
      }
      point[name] = std::isfinite(lo) && std::isfinite(hi)
                        ? nlohmann::json{{"low", lo}, {"high", hi}}
                        : nlohmann::json(nullptr);
    }
    out.push_back(point);
  }
  return out;
}

std::string format_pick_flips(const nlohmann::json& flips) {
  std::string out;
  const auto draws = flips["draws"].get<std::size_t>();
  for (const auto& s : flips["settings"]) {
    std::string line =
        fmt::format("bands      {}: pick {} holds in {} of {} draws", s["slo"].get<std::string>(),
                    s["pick"].get<std::string>(), s["holds"].get<int>(), draws);
    for (const auto& o : s["others"]) {
      line += fmt::format("; {} in {}", o["pick"].get<std::string>(), o["draws"].get<int>());
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace servesim::sweep
