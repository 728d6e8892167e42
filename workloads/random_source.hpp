#pragma once

#include <cstdint>
#include <random>

namespace servesim {

// Seeded random numbers whose values depend only on the seed, never on the standard library:
// std::mt19937_64's output is fixed by the standard, but std:: distributions are
// implementation-defined, so every transform here (uniform, exponential, normal, gamma) is
// written out by hand. Not thread-safe; one instance per stream.
class RandomSource {
 public:
  explicit RandomSource(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t bits() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform in (0, 1): never 0, so log() of it is finite.
  double uniform_open01();
  // Uniform integer in [lo, hi] (inclusive), without modulo bias.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  // Exponential with the given mean (inverse CDF).
  double exponential(double mean);
  // Standard normal (Marsaglia polar method; the second value of each pair is kept).
  double normal();
  // Gamma with shape k > 0 and the given scale (Marsaglia–Tsang; k < 1 by the U^(1/k) boost).
  double gamma(double shape, double scale);

 private:
  std::mt19937_64 engine_;
  double spare_normal_ = 0;
  bool has_spare_normal_ = false;
};

}  // namespace servesim
