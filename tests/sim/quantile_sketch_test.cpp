#include "sim/output/quantile_sketch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace servesim {
namespace {

// Nearest-rank reference on a sorted vector: rank ceil(num/den · n), 1-based; q = 0 gives min.
double reference_quantile(const std::vector<double>& sorted, std::int64_t num, std::int64_t den) {
  const auto n = static_cast<std::int64_t>(sorted.size());
  std::int64_t rank = (num * n + den - 1) / den;
  rank = std::clamp<std::int64_t>(rank, 1, n);
  return sorted[static_cast<std::size_t>(rank - 1)];
}

struct Q {
  std::int64_t num;
  std::int64_t den;
  double value() const { return static_cast<double>(num) / static_cast<double>(den); }
};

const Q kTailQuantiles[] = {{1, 2}, {9, 10}, {99, 100}, {999, 1000}};

template <class Distribution>
std::vector<double> draw(Distribution dist, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (double& v : values) v = dist(rng);
  return values;
}

void check_against_exact(const std::vector<double>& values) {
  QuantileSketch sketch;
  double sum = 0;
  for (double v : values) {
    sketch.add(v);
    sum += v;
  }
  REQUIRE_FALSE(sketch.exact());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sketch.count() == static_cast<std::int64_t>(values.size()));
  CHECK(sketch.min() == sorted.front());
  CHECK(sketch.max() == sorted.back());
  CHECK(sketch.sum() == sum);
  CHECK(sketch.mean() == sum / static_cast<double>(values.size()));
  for (const Q& q : kTailQuantiles) {
    const double truth = reference_quantile(sorted, q.num, q.den);
    const double got = sketch.quantile(q.value());
    INFO("q = " << q.value() << ", exact " << truth << ", sketch " << got);
    CHECK(std::abs(got - truth) <= 0.01 * truth);
    // The bucket bound itself is the configured 0.5 %.
    CHECK(std::abs(got - truth) <= 0.005 * truth * (1 + 1e-9));
  }
  CHECK(sketch.quantile(0) == sorted.front());
  CHECK(sketch.quantile(1) == sorted.back());
}

TEST_CASE("the sketch is within 1% of exact quantiles on a million lognormal values",
          "[quantile_sketch]") {
  check_against_exact(draw(std::lognormal_distribution<double>(13.0, 1.5), 1'000'000, 1));
}

TEST_CASE("the sketch is within 1% of exact quantiles on a million exponential values",
          "[quantile_sketch]") {
  check_against_exact(draw(std::exponential_distribution<double>(1e-6), 1'000'000, 2));
}

TEST_CASE("the sketch is within 1% of exact quantiles on a million uniform values",
          "[quantile_sketch]") {
  check_against_exact(draw(std::uniform_real_distribution<double>(1.0, 1000.0), 1'000'000, 3));
}

TEST_CASE("a sketch under its exact limit answers nearest-rank quantiles exactly",
          "[quantile_sketch]") {
  QuantileSketch sketch(0.005, 1000);
  const std::vector<double> values = draw(std::lognormal_distribution<double>(0.0, 2.0), 1000, 4);
  for (double v : values) sketch.add(v);
  REQUIRE(sketch.exact());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t num = 0; num <= 1000; num += 7) {
    CHECK(sketch.quantile(static_cast<double>(num) / 1000) ==
          reference_quantile(sorted, num, 1000));
  }
  CHECK(sketch.quantile(0.29) == sorted[289]);  // 0.29 · 1000 is 290.00000000000006 in doubles
  CHECK(sketch.quantile(0.0) == sorted.front());
  CHECK(sketch.quantile(1.0) == sorted.back());

  sketch.add(1.0);  // the 1001st value spills into buckets
  CHECK_FALSE(sketch.exact());
  CHECK(sketch.count() == 1001);
}

TEST_CASE("nearest rank on a small exact sketch matches the textbook example",
          "[quantile_sketch]") {
  QuantileSketch sketch;
  for (double v : {15.0, 20.0, 35.0, 40.0, 50.0}) sketch.add(v);
  CHECK(sketch.quantile(0.05) == 15.0);
  CHECK(sketch.quantile(0.30) == 20.0);
  CHECK(sketch.quantile(0.40) == 20.0);
  CHECK(sketch.quantile(0.50) == 35.0);
  CHECK(sketch.quantile(1.00) == 50.0);
  CHECK(sketch.mean() == 32.0);
}

TEST_CASE("an empty sketch answers zeros", "[quantile_sketch]") {
  QuantileSketch sketch;
  CHECK(sketch.count() == 0);
  CHECK(sketch.quantile(0.5) == 0);
  CHECK(sketch.mean() == 0);
  CHECK(sketch.min() == 0);
  CHECK(sketch.max() == 0);
}

TEST_CASE("zeros and negative values are counted apart from the buckets", "[quantile_sketch]") {
  QuantileSketch sketch(0.01, 0);  // buckets from the first value
  for (int i = 0; i < 300; ++i) sketch.add(0.0);
  sketch.add(-5.0);  // clamped to 0
  for (int i = 1; i <= 699; ++i) sketch.add(static_cast<double>(i));
  CHECK(sketch.count() == 1000);
  CHECK(sketch.min() == 0);
  CHECK(sketch.quantile(0.301) == 0);
  CHECK(sketch.quantile(0.302) == Approx(1.0).epsilon(0.0101));
  CHECK(sketch.quantile(0.5) == Approx(199.0).epsilon(0.0101));
  CHECK(sketch.sum() == 699.0 * 700.0 / 2);
}

TEST_CASE("merging two halves gives the same answers as one sketch of all values",
          "[quantile_sketch]") {
  const std::vector<double> values =
      draw(std::lognormal_distribution<double>(10.0, 2.0), 200'000, 5);
  QuantileSketch all(0.005, 10'000), first(0.005, 10'000), second(0.005, 10'000);
  for (std::size_t i = 0; i < values.size(); ++i) {
    all.add(values[i]);
    (i < values.size() / 2 ? first : second).add(values[i]);
  }
  first.merge(second);
  CHECK(first.count() == all.count());
  CHECK(first.min() == all.min());
  CHECK(first.max() == all.max());
  CHECK(first.mean() == Approx(all.mean()).epsilon(1e-12));
  for (double q : {0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
    CHECK(first.quantile(q) == all.quantile(q));
  }
}

TEST_CASE("merge works for every mix of exact and bucketed sketches", "[quantile_sketch]") {
  const std::vector<double> small = draw(std::exponential_distribution<double>(1.0), 40, 6);
  const std::vector<double> big = draw(std::exponential_distribution<double>(1.0), 500, 7);
  auto make = [](const std::vector<double>& vs) {
    QuantileSketch s(0.005, 100);
    for (double v : vs) s.add(v);
    return s;
  };
  auto reference = [&](const std::vector<double>& a, const std::vector<double>& b) {
    QuantileSketch s(0.005, 100);
    for (double v : a) s.add(v);
    for (double v : b) s.add(v);
    return s;
  };
  auto same = [](const QuantileSketch& x, const QuantileSketch& y) {
    CHECK(x.count() == y.count());
    CHECK(x.exact() == y.exact());
    CHECK(x.min() == y.min());
    CHECK(x.max() == y.max());
    for (double q : {0.1, 0.5, 0.9, 0.99}) CHECK(x.quantile(q) == y.quantile(q));
  };

  SECTION("exact + exact that fits stays exact") {
    QuantileSketch a = make(small);
    a.merge(make(small));
    CHECK(a.exact());
    same(a, reference(small, small));
  }
  SECTION("exact + exact past the limit goes to buckets") {
    QuantileSketch a = make(small);
    QuantileSketch b = make(std::vector<double>(big.begin(), big.begin() + 70));
    a.merge(b);
    CHECK_FALSE(a.exact());
    same(a, reference(small, std::vector<double>(big.begin(), big.begin() + 70)));
  }
  SECTION("exact + bucketed") {
    QuantileSketch a = make(small);
    a.merge(make(big));
    same(a, reference(small, big));
  }
  SECTION("bucketed + exact") {
    QuantileSketch a = make(big);
    a.merge(make(small));
    same(a, reference(big, small));
  }
  SECTION("bucketed + bucketed") {
    QuantileSketch a = make(big);
    a.merge(make(big));
    same(a, reference(big, big));
  }
  SECTION("anything + empty and empty + anything") {
    QuantileSketch a = make(big);
    a.merge(QuantileSketch(0.005, 100));
    same(a, make(big));
    QuantileSketch e(0.005, 100);
    e.merge(make(small));
    same(e, make(small));
  }
}

TEST_CASE("merging sketches of different accuracy is refused", "[quantile_sketch]") {
  QuantileSketch a(0.005), b(0.01);
  CHECK_THROWS_AS(a.merge(b), std::invalid_argument);
  CHECK_THROWS_AS(QuantileSketch(0.0), std::invalid_argument);
  CHECK_THROWS_AS(QuantileSketch(1.0), std::invalid_argument);
}

TEST_CASE("bucket memory stays logarithmic in the value range, not the count",
          "[quantile_sketch]") {
  // Values spanning 1e-3 .. 1e9 (12 decades), log-uniform.
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> exponent(-3.0, 9.0);
  QuantileSketch coarse(0.01, 0);
  QuantileSketch fine(0.005, 0);
  for (int i = 0; i < 300'000; ++i) {
    const double v = std::pow(10.0, exponent(rng));
    coarse.add(v);
    fine.add(v);
  }
  const std::size_t coarse_after = coarse.bucket_count();
  CHECK(coarse_after < 2000);
  // ln(1e12) / ln(gamma) + 1, gamma = 1.005 / 0.995.
  CHECK(fine.bucket_count() <=
        static_cast<std::size_t>(std::log(1e12) / std::log(1.005 / 0.995)) + 2);
  for (int i = 0; i < 300'000; ++i) coarse.add(std::pow(10.0, exponent(rng)));
  CHECK(coarse.bucket_count() <= coarse_after + 2);  // twice the values, same memory
}

TEST_CASE("adding a value n times at once leaves the state of n single adds", "[quantile_sketch]") {
  // Runs of equal gaps, exact values crossing the exact limit inside a run, zeros and a value
  // whose repeated sum is not n times the value in floating point.
  const std::vector<std::pair<double, std::int64_t>> runs{
      {0.1, 7}, {3.7, 1}, {0.0, 4}, {0.1, 30}, {12.25, 5}, {0.3, 11}, {0.3, 9}, {1e-3, 3}};
  QuantileSketch one_by_one(0.005, 40);
  QuantileSketch at_once(0.005, 40);
  for (const auto& [v, n] : runs) {
    for (std::int64_t i = 0; i < n; ++i) one_by_one.add(v);
    at_once.add(v, n);
  }
  REQUIRE_FALSE(at_once.exact());
  CHECK(at_once.count() == one_by_one.count());
  CHECK(at_once.sum() == one_by_one.sum());  // bit for bit: summed in the same order
  CHECK(at_once.sum() != 0.1 * 37 + 3.7 + 0.3 * 20 + 12.25 * 5 + 1e-3 * 3);
  CHECK(at_once.min() == one_by_one.min());
  CHECK(at_once.max() == one_by_one.max());
  CHECK(at_once.bucket_count() == one_by_one.bucket_count());
  for (double q : {0.0, 0.05, 0.2, 0.5, 0.75, 0.9, 0.99, 1.0}) {
    CHECK(at_once.quantile(q) == one_by_one.quantile(q));
  }
}

TEST_CASE("a repeated add sums bit for bit as single adds across binades, ties and tiny values",
          "[quantile_sketch]") {
  // Values of every magnitude against the running sum: whole multiples of its ulp, exact halves
  // of one (ties, rounded by the partial sum's parity), values below half an ulp, and runs long
  // enough to carry the sum over a power of two.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> scale(-60, 12);
  std::uniform_int_distribution<std::int64_t> count(1, 300);
  std::uniform_int_distribution<int> kind(0, 3);
  QuantileSketch one_by_one(0.005, 1000);
  QuantileSketch at_once(0.005, 1000);
  std::int64_t ties = 0;
  for (int run = 0; run < 20'000; ++run) {
    const std::int64_t n = count(rng);
    double v = 0;
    int e = 0;
    std::frexp(at_once.sum(), &e);
    const double ulp = std::ldexp(1.0, e - 53);
    switch (kind(rng)) {
      case 0:
        v = std::ldexp(unit(rng), scale(rng));
        break;
      case 1:
        v = (std::floor(unit(rng) * 8) + 0.5) * ulp, ++ties;
        break;
      case 2:
        v = std::floor(unit(rng) * 1e6) * ulp;
        break;
      default:
        v = unit(rng) * 0.49 * ulp;
        break;
    }
    for (std::int64_t i = 0; i < n; ++i) one_by_one.add(v);
    at_once.add(v, n);
    REQUIRE(at_once.sum() == one_by_one.sum());
  }
  CHECK(ties > 1000);
  CHECK(at_once.count() == one_by_one.count());
  CHECK(at_once.sum() > 1e3);  // the sum crossed many binades
}

}  // namespace
}  // namespace servesim
