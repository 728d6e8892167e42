#include "sim/util/coordinate_search.hpp"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

using namespace servesim;

TEST_CASE("a coordinate search walks each axis downhill within its bounds, halving its steps",
          "[sim][search]") {
  // (x − 3)² + (y − 0.3)², with y bounded to [0, 0.25]: the minimum within bounds is (3, 0.25).
  double x = 0;
  double y = 0;
  const auto f = [&] { return (x - 3) * (x - 3) + (y - 0.3) * (y - 0.3); };
  const double best = coordinate_search({{&x, -10, 10, 1}, {&y, 0, 0.25, 0.1}}, 8, f(), f);
  CHECK(x == Approx(3));
  CHECK(y == 0.25);  // stopped by the bound, not by the objective
  CHECK(best == Approx(0.05 * 0.05));
  CHECK(best == Approx(f()));  // the values are left at the best
  // One round of steps 1 from x = 0: 0 → 1 → 2 → 3, then 4 is worse and undone.
  double z = 0;
  const auto g = [&] { return std::abs(z - 3); };
  CHECK(coordinate_search({{&z, -10, 10, 1}}, 1, g(), g) == 0);
  CHECK(z == 3);
  // A move that does not improve by more than 1e-9 is undone.
  double flat = 1;
  const auto h = [&] { return 5.0; };
  CHECK(coordinate_search({{&flat, 0, 2, 0.5}}, 3, h(), h) == 5.0);
  CHECK(flat == 1);
}

TEST_CASE("a coordinate search never evaluates the point an improving move just left",
          "[sim][search]") {
  // |z − 2.5| from z = 5, steps 1: down to 4, 3, then 2 is no better and undone; up from 3 would
  // revisit 4 (the point the last improving move left) and is skipped: 4, 3, 2 are evaluated.
  double z = 5;
  std::vector<double> seen;
  const auto g = [&] {
    seen.push_back(z);
    return std::abs(z - 2.5);
  };
  const double start = g();
  seen.clear();
  CHECK(coordinate_search({{&z, -10, 10, 1}}, 1, start, g) == 0.5);
  CHECK(z == 3);
  CHECK(seen == std::vector<double>{4, 3, 2});
  // A bound that shortens the last move leaves a new point above: 0.35 → 0.3 (the bound), then
  // up evaluates 0.38, which was never seen.
  double w = 0.35;
  std::vector<double> tried;
  const auto h = [&] {
    tried.push_back(w);
    return std::abs(w - 0.3);
  };
  coordinate_search({{&w, 0.3, 0.9, 0.08}}, 1, h(), h);
  CHECK(w == 0.3);
  REQUIRE(tried.size() == 3);
  CHECK(tried[1] == 0.3);
  CHECK(tried[2] == Approx(0.38));
}
