#include "tools/costmodel/cap_sweep.hpp"

#include <algorithm>
#include <cmath>

#include "sim/config/config_node.hpp"

namespace servesim {

std::string default_cap_sweeps_path() { return SERVESIM_CAP_SWEEPS; }

std::map<std::string, CapSweep> load_cap_sweeps(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.require_map("a map from GPU name to its cap sweep (gemm, caps_w, points)");
  std::map<std::string, CapSweep> out;
  for (const std::string& gpu : root.keys()) {
    const ConfigNode node = root.at(gpu);
    node.require_map("a cap sweep (gemm, caps_w, points)");
    node.check_keys({"gemm", "caps_w", "points"});
    CapSweep s;
    s.gpu = gpu;
    const ConfigNode gemm = node.at("gemm");
    gemm.require_map("the swept GEMM's shape {k, n}");
    gemm.check_keys({"k", "n"});
    s.gemm_k = static_cast<int>(gemm.get_positive_int("k"));
    s.gemm_n = static_cast<int>(gemm.get_positive_int("n"));
    const ConfigNode caps = node.at("caps_w");
    if (!caps.is_sequence() || caps.size() != 2) caps.fail("expected [low cap, high cap] in W");
    s.low_cap_w = caps.at(std::size_t{0}).as_double();
    s.high_cap_w = caps.at(std::size_t{1}).as_double();
    if (!(s.low_cap_w > 0 && s.low_cap_w < s.high_cap_w)) {
      caps.fail("expected 0 < low cap < high cap (W)");
    }
    const ConfigNode points = node.at("points");
    if (!points.is_sequence() || points.size() == 0) {
      points.fail("expected a list of {tokens, penalty_pct: [low, high]}");
    }
    for (const ConfigNode& p : points.items()) {
      p.require_map("a point {tokens, penalty_pct: [low, high]}");
      p.check_keys({"tokens", "penalty_pct"});
      CapSweep::Point pt;
      pt.tokens = static_cast<int>(p.get_positive_int("tokens"));
      if (!s.points.empty() && pt.tokens <= s.points.back().tokens) {
        p.at("tokens").fail("expected token counts in ascending order");
      }
      const ConfigNode range = p.at("penalty_pct");
      if (!range.is_sequence() || range.size() != 2) {
        range.fail("expected [low, high] in percent");
      }
      pt.low_pct = range.at(std::size_t{0}).as_double();
      pt.high_pct = range.at(std::size_t{1}).as_double();
      if (!(pt.low_pct > -100 && pt.low_pct <= pt.high_pct && pt.high_pct < 100)) {
        range.fail("expected -100 < low ≤ high < 100 (percent)");
      }
      s.points.push_back(pt);
    }
    out.emplace(gpu, std::move(s));
  }
  return out;
}

double interpolate_points(const std::vector<CapSweep::Point>& points, int tokens, double u) {
  const double w = std::clamp((u - 0.1) / 0.8, 0.0, 1.0);
  auto at = [&](const CapSweep::Point& p) { return p.low_pct + w * (p.high_pct - p.low_pct); };
  if (tokens <= points.front().tokens) return at(points.front());
  if (tokens >= points.back().tokens) return at(points.back());
  const auto hi = std::find_if(points.begin(), points.end(),
                               [&](const CapSweep::Point& p) { return p.tokens >= tokens; });
  const auto lo = hi - 1;
  const double x = std::log2(static_cast<double>(tokens) / lo->tokens) /
                   std::log2(static_cast<double>(hi->tokens) / lo->tokens);
  return at(*lo) + x * (at(*hi) - at(*lo));
}

}  // namespace servesim
