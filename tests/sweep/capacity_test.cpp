#include "tools/sweep/capacity.hpp"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim::sweep;

TEST_CASE(
    "the capacity search brackets the highest rate that meets and narrows it to the tolerance",
    "[sweep][capacity]") {
  std::vector<double> tried;
  const auto meets = [&](double rate) {
    tried.push_back(rate);
    return rate <= 7.3;
  };
  const CapacityResult r = find_max_rate(2, 0.01, meets);
  CHECK(r.outcome == "bracketed");
  CHECK(r.max_rate <= 7.3);
  CHECK(r.failing_rate > 7.3);
  CHECK(r.failing_rate - r.max_rate <= 0.01 * r.max_rate);
  CHECK(r.evaluations == static_cast<int>(tried.size()));
  CHECK(tried[0] == 2);  // 2, 4, 8 (fails), then inside (4, 8)
  CHECK(tried[1] == 4);
  CHECK(tried[2] == 8);
  for (const double x : tried) CHECK(x == round_rate(x));  // what --set reads back exactly
}

TEST_CASE("the capacity search halves down from a failing start", "[sweep][capacity]") {
  const CapacityResult r = find_max_rate(100, 0.05, [](double rate) { return rate < 3; });
  CHECK(r.outcome == "bracketed");
  CHECK(r.max_rate < 3);
  CHECK(r.failing_rate >= 3);
  CHECK(r.failing_rate - r.max_rate <= 0.05 * r.max_rate);
}

TEST_CASE("a capacity search says when no rate or every rate meets", "[sweep][capacity]") {
  const CapacityResult none = find_max_rate(
      1, 0.01, [](double) { return false; }, 5);
  CHECK(none.outcome == "meets at no rate tried");
  CHECK(std::isnan(none.max_rate));
  CHECK(none.failing_rate == Approx(1.0 / 32));
  CHECK(none.evaluations == 6);
  const CapacityResult all = find_max_rate(
      1, 0.01, [](double) { return true; }, 5);
  CHECK(all.outcome == "meets at every rate tried");
  CHECK(all.max_rate == 32);
  CHECK(std::isnan(all.failing_rate));
}
