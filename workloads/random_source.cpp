#include "workloads/random_source.hpp"

#include <cmath>
#include <limits>

namespace servesim {

double RandomSource::uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double RandomSource::uniform_open01() {
  // (k + 0.5) / 2^53 for k in [0, 2^53): symmetric, never 0 or 1.
  return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
}

std::int64_t RandomSource::uniform_int(std::int64_t lo, std::int64_t hi) {
  const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (range == std::numeric_limits<std::uint64_t>::max()) return static_cast<std::int64_t>(bits());
  const std::uint64_t n = range + 1;
  // Reject the top partial block so every value has the same number of preimages.
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x = bits();
  while (x >= limit) x = bits();
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + x % n);
}

double RandomSource::exponential(double mean) { return -std::log(uniform_open01()) * mean; }

double RandomSource::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u = 0;
  double v = 0;
  double s = 0;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_normal_ = v * f;
  has_spare_normal_ = true;
  return u * f;
}

double RandomSource::gamma(double shape, double scale) {
  if (shape < 1.0) {
    // Gamma(k) = Gamma(k + 1) · U^(1/k).
    const double g = gamma(shape + 1.0, 1.0);
    return g * std::pow(uniform_open01(), 1.0 / shape) * scale;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v * scale;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

}  // namespace servesim
