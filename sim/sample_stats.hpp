#pragma once

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

}  // namespace servesim
