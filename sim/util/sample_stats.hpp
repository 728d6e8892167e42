#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace servesim {

// Exact order statistics of a small sample held in memory (for streams, QuantileSketch).
// The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics (numpy's
// default); sorts `values`. NaN for an empty input.
double quantile(std::vector<double>& values, double q);
// The median (quantile 0.5: the mean of the two middle values of an even count); NaN for an
// empty input.
double median(std::vector<double> values);
// A weighted median of (value, weight ≥ 0) pairs: the least value whose cumulative weight, in
// value order, reaches half the total, which minimises Σ weight·|s − value| over s. Pairs with a
// non-finite value or weight, or a negative weight, are left out. NaN for no positive weight.
double weighted_median(std::vector<std::pair<double, double>> value_weight);

// The mean of a sample and the half-width of its two-sided 95% confidence interval from
// Student's t with n − 1 degrees of freedom: mean ± t(0.975, n − 1) · s / √n, s the sample
// standard deviation (n − 1 in the denominator). half_width is NaN for n < 2 (no spread to
// estimate), mean NaN for n = 0.
struct MeanCi {
  double mean = 0;
  double half_width = 0;
  std::size_t n = 0;
};
MeanCi mean_ci95(const std::vector<double>& values);

// The mean of the finite values (NaN and ±inf left out), and how many there were; mean NaN when
// there are none.
struct FiniteMean {
  double mean = 0;
  int n = 0;
};
FiniteMean mean_of_finite(const std::vector<double>& values);

// Spearman's rank correlation of paired samples: Pearson's correlation of their ranks, tied
// values taking the mean of the ranks they span. NaN for fewer than two pairs, different lengths
// or a sample whose ranks do not vary.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace servesim
