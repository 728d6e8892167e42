#include "tools/sim2real/score.hpp"

#include <cmath>

#include <catch2/catch.hpp>

using namespace servesim::sim2real;

TEST_CASE("two hand-made requests give the metrics, errors and medians computed by hand",
          "[sim2real][score]") {
  // Two requests: E2E 1000 and 3000 ms, TTFT 100 and 300 ms, 11 output tokens on average.
  const Metrics sim = metrics_of({{1000, 100}, {3000, 300}}, 11);
  CHECK(sim.e2e_mean == Approx(2000));
  CHECK(sim.e2e_p90 == Approx(2800));  // 1000 + 0.9 × 2000 (linear interpolation)
  CHECK(sim.e2e_p99 == Approx(2980));
  CHECK(sim.ttft_mean == Approx(200));
  CHECK(sim.ttft_p90 == Approx(280));
  CHECK(sim.ttft_p99 == Approx(298));
  CHECK(sim.itl_mean == Approx(180));  // (2000 − 200) / (11 − 1)

  Metrics real;
  real.e2e_mean = 2500;         // sim −20%
  real.e2e_p90 = 2800;          // 0
  real.e2e_p99 = 2980.0 / 1.1;  // +10%
  real.ttft_mean = 160;         // +25%
  real.ttft_p90 = 350;          // −20%
  real.ttft_p99 = 298;          // 0
  real.itl_mean = 200;          // −10%
  const RunScore s = score_run(sim, real);
  REQUIRE(s.metrics.size() == 7);
  CHECK(s.metrics[0].ape == Approx(20));
  CHECK(s.metrics[0].signed_pct == Approx(-20));
  CHECK(s.metrics[1].ape == Approx(0).margin(1e-9));
  CHECK(s.metrics[2].signed_pct == Approx(10));
  CHECK(s.metrics[3].signed_pct == Approx(25));
  CHECK(s.metrics[4].signed_pct == Approx(-20));
  CHECK(s.metrics[6].signed_pct == Approx(-10));
  // APEs 20, 0, 10, 25, 20, 0, 10 → median 10.
  CHECK(s.overall == Approx(10));

  // A second run with every APE 30: the median of two runs is their mean.
  RunScore other;
  for (int i = 0; i < 7; ++i) other.metrics.push_back(score_metric(130, 100));
  other.overall = 30;
  const MedianScore m = median_score({&s, &other});
  CHECK(m.runs == 2);
  CHECK(m.overall == Approx(20));
  CHECK(m.metrics[0] == Approx(25));  // (20 + 30) / 2
  CHECK(m.metrics[1] == Approx(15));
}

TEST_CASE("the output count a measured ITL implies solves its definition for the count",
          "[sim2real][score]") {
  Metrics real;
  real.e2e_mean = 17062.13;  // run 67 (Llama-2-7b reasoning-lite): output_len 1448 generated
  real.ttft_mean = 55.10;
  real.itl_mean = 15.20;
  REQUIRE(implied_output_tokens(real));
  CHECK(*implied_output_tokens(real) == Approx(1 + (17062.13 - 55.10) / 15.20));
  // Scoring with it gives back the measured ITL from the measured E2E and TTFT.
  const double n = *implied_output_tokens(real);
  CHECK((real.e2e_mean - real.ttft_mean) / (n - 1) == Approx(real.itl_mean));
  real.itl_mean = 0;
  CHECK_FALSE(implied_output_tokens(real));
  real.itl_mean = -1;
  CHECK_FALSE(implied_output_tokens(real));
}

TEST_CASE("per-request errors match rows by index and skip rows missing on either side",
          "[sim2real][score]") {
  std::vector<std::optional<Latency>> sim = {Latency{1100, 110}, Latency{900, 45}, std::nullopt,
                                             Latency{500, 50}};
  std::vector<std::optional<Latency>> real = {Latency{1000, 100}, Latency{1000, 50},
                                              Latency{1000, 100}, std::nullopt};
  const RequestErrors e = request_errors(sim, real);
  CHECK(e.matched == 2);
  CHECK(e.e2e_p50 == Approx(0));       // +10% and −10%
  CHECK(e.e2e_abs_p50 == Approx(10));  // both 10%
  CHECK(e.ttft_p10 == Approx(-8));     // −10 + 0.1 × 20
  CHECK(e.ttft_p90 == Approx(8));
}
