#include "costmodels/rf/step_function.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim {

double StepFunction::operator()(double x) const {
  if (starts.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (x > domain_max) return (*this)(domain_max)*x / domain_max;
  const auto it = std::upper_bound(starts.begin(), starts.end(), x);
  const std::size_t k =
      it == starts.begin() ? 0 : static_cast<std::size_t>(it - starts.begin()) - 1;
  return values[k];
}

StepFunction StepFunction::tabulate(const Forest& forest, double domain_min, double domain_max) {
  StepFunction f;
  f.domain_max = domain_max;
  std::vector<float> x{static_cast<float>(domain_min)};
  for (double t : forest.split_thresholds(0)) {
    const double s = std::ceil(t);  // first integer that goes right of this split
    if (s > x.back() && s <= domain_max) x.push_back(static_cast<float>(s));
  }
  const std::vector<float> y = forest.predict(x);
  f.starts.assign(x.begin(), x.end());
  f.values.assign(y.begin(), y.end());
  return f;
}

}  // namespace servesim
