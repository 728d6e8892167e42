#include "sim/util/sample_stats.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("quantiles interpolate linearly like numpy and are NaN for no data", "[sim][stats]") {
  std::vector<double> v = {4, 1, 3, 2};
  CHECK(quantile(v, 0.5) == Approx(2.5));
  CHECK(quantile(v, 0.9) == Approx(3.7));
  CHECK(v == std::vector<double>{1, 2, 3, 4});  // sorted in place
  std::vector<double> none;
  CHECK(std::isnan(quantile(none, 0.5)));
}

TEST_CASE(
    "the median is the middle value of an odd count and the mean of the two middle ones "
    "of an even count",
    "[sim][stats]") {
  CHECK(median({5, -1, 3}) == 3);
  CHECK(median({0.4, -0.2, 0.1, 0.3}) == Approx(0.2));
  CHECK(median({7}) == 7);
  CHECK(std::isnan(median({})));
  const std::vector<double> kept = {3, 1, 2};
  CHECK(median(kept) == 2);
  CHECK(kept == std::vector<double>{3, 1, 2});  // taken by value: the caller's order stays
}

TEST_CASE("the weighted median minimises the weighted absolute deviation", "[sim][stats]") {
  CHECK(weighted_median({{10, 1}, {1, 1}, {2, 1}}) == 2);
  CHECK(weighted_median({{10, 1}, {1, 5}, {2, 1}}) == 1);         // the heavy value wins
  CHECK(weighted_median({{1, 1}, {2, 1}, {3, 3.5}}) == 3);        // half the weight at one value
  CHECK(weighted_median({{4, 1}, {1, 1}, {2, 1}, {3, 1}}) == 2);  // even count: the lower one
  CHECK(std::isnan(weighted_median({})));
  CHECK(std::isnan(weighted_median({{1, 0}, {2, 0}})));
  // Non-finite values or weights and negative weights are left out.
  const double nan = std::nan("");
  CHECK(weighted_median({{nan, 5}, {1, 1}, {2, 1}, {3, 1}, {9, -4}, {0, nan}}) == 2);
  CHECK(std::isnan(weighted_median({{nan, 1}, {1, -1}})));
  // No other point of the sample does better on Σ w·|s − v|.
  const std::vector<std::pair<double, double>> vw = {
      {0.93, 1.1}, {1.07, 0.9}, {0.98, 1.3}, {1.21, 0.7}, {1.01, 1.0}};
  auto cost = [&](double s) {
    double c = 0;
    for (const auto& [v, w] : vw) c += w * std::abs(s - v);
    return c;
  };
  const double m = weighted_median(vw);
  CHECK(m == 1.01);  // weights 1.1 + 1.3 < half of 5.0 ≤ 1.1 + 1.3 + 1.0
  for (const auto& [v, w] : vw) CHECK(cost(m) <= cost(v));
}

TEST_CASE("the 95% confidence interval of a mean uses Student's t with n - 1 degrees of freedom",
          "[sim][stats]") {
  // s = sqrt(2.5), t(0.975, 4) = 2.776445: half-width 2.776445 · 1.581139 / sqrt(5).
  const MeanCi five = mean_ci95({1, 2, 3, 4, 5});
  CHECK(five.n == 5);
  CHECK(five.mean == Approx(3));
  CHECK(five.half_width == Approx(1.963243).epsilon(1e-6));
  // Two values: t(0.975, 1) = 12.706205, s = sqrt(2): the interval is wide, as it should be.
  CHECK(mean_ci95({1, 3}).half_width == Approx(12.706205).epsilon(1e-6));
  CHECK(mean_ci95({4, 4, 4}).half_width == 0);
  const MeanCi one = mean_ci95({7});
  CHECK(one.mean == 7);
  CHECK(std::isnan(one.half_width));
  CHECK(std::isnan(mean_ci95({}).mean));
}

TEST_CASE("Spearman's correlation ranks ties by their mean rank", "[sim][stats]") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1));
  CHECK(spearman({1, 2, 3, 4}, {9, 1, 0.5, -3}) == Approx(-1));
  CHECK(spearman({1, 2, 3}, {1, 8, 27}) == Approx(1));  // any monotone map
  // y's ranks 1, 2, 3.5, 5, 3.5 (7 is tied): r = 0.8207827.
  CHECK(spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}) == Approx(0.8207827).epsilon(1e-6));
  CHECK(std::isnan(spearman({1}, {1})));
  CHECK(std::isnan(spearman({1, 2}, {3, 3})));  // no variation to rank
  CHECK(std::isnan(spearman({1, 2}, {1, 2, 3})));
}

TEST_CASE("the mean of the finite values leaves NaN and infinities out", "[sim][stats]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const FiniteMean m = mean_of_finite({1, nan, 2, inf, 6});
  CHECK(m.mean == 3);
  CHECK(m.n == 3);
  CHECK(std::isnan(mean_of_finite({nan, -inf}).mean));
  CHECK(mean_of_finite({}).n == 0);
}
