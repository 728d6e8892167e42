// Diurnal arrivals: the count per hour follows the cosine profile, a compressed day keeps the
// rates, and a seed gives the same arrivals.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/arrival_process.hpp"

namespace servesim {
namespace {

// Arrivals per simulated hour-of-day bucket over one day of `day_s` seconds.
std::vector<double> per_bucket(const DiurnalArrivals& d, std::uint64_t seed, int buckets) {
  ArrivalProcess p(d, seed);
  std::vector<double> n(static_cast<std::size_t>(buckets), 0);
  for (SimTime t = p.next(); t < d.day; t = p.next()) {
    ++n[static_cast<std::size_t>(t * buckets / d.day)];
  }
  return n;
}

}  // namespace

TEST_CASE("Diurnal arrivals follow the day's cosine from trough to peak", "[workloads][diurnal]") {
  DiurnalArrivals d;
  d.peak_qps = 20;
  d.trough_qps = 2;
  d.peak_hour = 14;
  d.day = seconds_to_sim(86'400);
  CHECK(d.rate_at(seconds_to_sim(14 * 3600)) == Approx(20));
  CHECK(d.rate_at(seconds_to_sim(2 * 3600)) == Approx(2));
  CHECK(d.rate_at(seconds_to_sim(8 * 3600)) == Approx(11));
  const std::vector<double> n = per_bucket(d, 5, 24);
  for (int h = 0; h < 24; ++h) {
    // The mean rate over hour h, times 3600 s: within 5 standard deviations (Poisson).
    double expected = 0;
    for (int k = 0; k < 60; ++k) {
      expected += d.rate_at(seconds_to_sim(h * 3600 + k * 60 + 30)) * 60;
    }
    INFO("hour " << h);
    CHECK(std::abs(n[static_cast<std::size_t>(h)] - expected) < 5 * std::sqrt(expected));
  }
  CHECK(n[14] > 5 * n[2]);
}

TEST_CASE("A compressed diurnal day keeps its rates and its shape", "[workloads][diurnal]") {
  DiurnalArrivals d;
  d.peak_qps = 40;
  d.trough_qps = 4;
  d.day = seconds_to_sim(3600);  // a day per hour
  const std::vector<double> n = per_bucket(d, 9, 24);
  double total = 0;
  for (double x : n) total += x;
  // Mean rate (peak + trough) / 2 = 22 req/s over 3600 s.
  CHECK(std::abs(total - 22 * 3600) < 5 * std::sqrt(22 * 3600));
  CHECK(n[14] > 5 * n[2]);
  CHECK(per_bucket(d, 9, 24) == n);  // the same seed, the same arrivals
  CHECK(per_bucket(d, 10, 24) != n);
}

}  // namespace servesim
