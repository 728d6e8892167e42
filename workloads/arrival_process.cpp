#include "workloads/arrival_process.hpp"

#include <cmath>

namespace servesim {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

ArrivalProcess::ArrivalProcess(const ArrivalSpec& spec, std::uint64_t seed)
    : spec_(spec), rng_(substream_seed(seed, 1)) {}

SimTime ArrivalProcess::next() {
  ++count_;
  std::visit(
      Overloaded{
          [&](const PoissonArrivals& p) { now_ += std::llround(rng_.exponential(1e9 / p.qps)); },
          [&](const GammaArrivals& g) {
            const double shape = 1.0 / (g.cv * g.cv);
            now_ += std::llround(rng_.gamma(shape, 1e9 / (g.qps * shape)));
          },
          [&](const StaticArrivals& s) {
            now_ = std::llround(static_cast<double>(count_) * 1e9 / s.qps);
          },
      },
      spec_);
  return now_;
}

std::string_view ArrivalProcess::kind() const {
  static constexpr std::string_view kNames[] = {"poisson", "gamma", "static"};
  return kNames[spec_.index()];
}

}  // namespace servesim
