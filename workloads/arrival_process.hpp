#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "sim/time.hpp"
#include "workloads/random_source.hpp"

namespace servesim {

// Exponential gaps with mean 1/qps.
struct PoissonArrivals {
  double qps = 1;
};
// Gamma gaps with mean 1/qps and coefficient of variation cv: shape 1/cv², scale 1/(qps·shape).
struct GammaArrivals {
  double qps = 1;
  double cv = 1;
};
// Evenly spaced gaps of exactly 1/qps.
struct StaticArrivals {
  double qps = 1;
};
using ArrivalSpec = std::variant<PoissonArrivals, GammaArrivals, StaticArrivals>;

// A synthetic arrival process: the k-th call returns the sum of k gaps (so the first arrival
// comes one gap after the start), in integer ns. Random gaps are rounded to the nearest ns and
// accumulated in integers, so times never drift; static arrivals are round(k·1e9/qps) exactly.
// Deterministic for a seed on any standard library. O(1) state. Not thread-safe.
class ArrivalProcess {
 public:
  ArrivalProcess(const ArrivalSpec& spec, std::uint64_t seed);

  // Nanoseconds after the start of the next arrival; non-decreasing.
  SimTime next();
  std::string_view kind() const;

 private:
  ArrivalSpec spec_;
  RandomSource rng_;
  SimTime now_ = 0;
  std::int64_t count_ = 0;
};

}  // namespace servesim
