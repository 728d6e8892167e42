#include "sim/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

double quantile(std::vector<double>& values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double h = static_cast<double>(values.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double median(std::vector<double> values) { return quantile(values, 0.5); }

double weighted_median(std::vector<std::pair<double, double>> value_weight) {
  std::erase_if(value_weight, [](const std::pair<double, double>& p) {
    return !std::isfinite(p.first) || !std::isfinite(p.second) || p.second < 0;
  });
  std::sort(value_weight.begin(), value_weight.end());
  double total = 0;
  for (const auto& [v, w] : value_weight) total += w;
  if (!(total > 0)) return std::numeric_limits<double>::quiet_NaN();
  double cumulative = 0;
  for (const auto& [v, w] : value_weight) {
    cumulative += w;
    if (cumulative >= total / 2) return v;
  }
  return value_weight.back().first;
}

}  // namespace servesim
