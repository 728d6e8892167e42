#pragma once

#include <vector>

namespace servesim {

// Exact order statistics of a small sample held in memory (for streams, QuantileSketch).
// The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics (numpy's
// default); sorts `values`. NaN for an empty input.
double quantile(std::vector<double>& values, double q);
// The median (quantile 0.5: the mean of the two middle values of an even count); NaN for an
// empty input.
double median(std::vector<double> values);

}  // namespace servesim
