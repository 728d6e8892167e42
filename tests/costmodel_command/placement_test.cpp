// Placement of independent pieces on GPUs that run theirs in turn
// (tools/costmodel/placement.hpp).
#include "tools/costmodel/placement.hpp"

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using namespace servesim;
using Catch::Contains;

TEST_CASE("earliest-finish placement and the oracle on a case worked by hand", "[placement]") {
  // GPU 0 is capped: the big piece costs 11 there and 10 on GPU 1; small ones cost 1 on either.
  const PriceTable capped = {{11, 10}, {1, 1}, {1, 1}, {1, 1}};
  const PriceTable blind = {{10, 10}, {1, 1}, {1, 1}, {1, 1}};
  // Aware: the big piece goes where it finishes first (GPU 1, 10), the small ones to GPU 0.
  const Placement aware = earliest_finish(capped);
  CHECK(aware.gpu_of == std::vector<int>{1, 0, 0, 0});
  CHECK(aware.makespan_ns == 10);
  // Blind sees equal GPUs: the tie sends the big piece to GPU 0, where it really takes 11.
  const Placement b = earliest_finish(blind);
  CHECK(b.gpu_of == std::vector<int>{0, 1, 1, 1});
  CHECK(makespan_ns(b.gpu_of, capped) == 11);
  // Its ties say nothing of the caps: over both GPU orders it takes 11, then 10.
  CHECK(earliest_finish_makespan_over_orders(blind, capped) == 10.5);
  // A scheduler with distinct prices does not depend on the order.
  CHECK(earliest_finish_makespan_over_orders(capped, capped) == 10);
  // The oracle: no assignment beats 10 (the big piece alone takes at least 10).
  const Placement oracle = brute_force(capped, 1 << 10, "test");
  CHECK(oracle.makespan_ns == 10);
  CHECK(makespan_ns(oracle.gpu_of, capped) == 10);
}

TEST_CASE("the oracle finds what list scheduling misses, and refuses a problem too large",
          "[placement]") {
  // Pieces 3, 3, 2, 2, 2 on two equal GPUs: longest first puts 3 | 3, then 2 | 2, then the last
  // 2 on GPU 0: 7. The optimum is 3 + 3 | 2 + 2 + 2 = 6.
  const PriceTable p = {{3, 3}, {3, 3}, {2, 2}, {2, 2}, {2, 2}};
  CHECK(earliest_finish(p).makespan_ns == 7);
  const Placement oracle = brute_force(p, 1 << 10, "test");
  CHECK(oracle.makespan_ns == 6);
  CHECK(oracle.gpu_of == std::vector<int>{0, 0, 1, 1, 1});  // the first optimum in order
  // 2^5 = 32 assignments against a limit of 16.
  CHECK_THROWS_WITH(brute_force(p, 16, "--mix 'x'"),
                    Contains("--mix 'x'") && Contains("2^5") && Contains("16"));
}
