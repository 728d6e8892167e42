#include "sim/util/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>

#include "sim/util/constants.hpp"

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

FiniteMean mean_of_finite(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (const double x : values) {
    if (std::isfinite(x)) {
      sum += x;
      ++n;
    }
  }
  return {n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN(), n};
}

MeanCi mean_ci95(const std::vector<double>& values) {
  MeanCi ci;
  ci.n = values.size();
  if (values.empty()) return {kNaN, kNaN, 0};
  const double n = static_cast<double>(values.size());
  ci.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (values.size() < 2) {
    ci.half_width = kNaN;
    return ci;
  }
  double squares = 0;
  for (const double v : values) squares += (v - ci.mean) * (v - ci.mean);
  const double sd = std::sqrt(squares / (n - 1));
  const boost::math::students_t t(n - 1);
  ci.half_width = boost::math::quantile(t, 0.975) * sd / std::sqrt(n);
  return ci;
}

namespace {
// Ranks 1…n of `v`, ties sharing the mean of the ranks they span.
std::vector<double> mean_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = static_cast<double>(i + j) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = mean_rank;
    i = j + 1;
  }
  return rank;
}
}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return kNaN;
  const std::vector<double> rx = mean_ranks(x);
  const std::vector<double> ry = mean_ranks(y);
  const double mean = static_cast<double>(x.size() + 1) / 2;  // of ranks 1…n, ties or not
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx <= 0 || syy <= 0) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace servesim
