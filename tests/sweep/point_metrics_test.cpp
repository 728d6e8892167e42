#include "tools/sweep/point_metrics.hpp"

#include <cmath>

#include <catch2/catch.hpp>

using namespace servesim::sweep;

TEST_CASE("a run's summary flattens to one value per metric name and NaN where it is null",
          "[sweep][metrics]") {
  nlohmann::json s;
  s["requests"] = {{"arrived", 10},
                   {"finished", 9},
                   {"rejected", 1},
                   {"preemptions", 2},
                   {"preempted_requests", 1},
                   {"prompt_tokens", 900},
                   {"output_tokens", 90},
                   {"rejected_by_admission", 1},
                   {"demoted", 3}};
  s["makespan_s"] = 4.5;
  s["steps"] = 120;
  s["throughput"] = {
      {"requests_per_s", 2.0}, {"output_tokens_per_s", 20.0}, {"prefill_tokens_per_s", 200.0}};
  for (const char* m : {"ttft", "tbt", "tpot", "e2e", "scheduling_delay"}) {
    s["latency_ms"][m] = {{"mean", 1.0}, {"p50", 2.0}, {"p90", 3.0},
                          {"p95", 3.5},  {"p99", 4.0}, {"max", 5.0}};
  }
  s["latency_ms"]["tbt"]["p99"] = nullptr;
  s["slo"] = {{"attainment", 0.9}, {"goodput_requests_per_s", 1.8}, {"served_past_deadline", 2}};
  s["wait_estimate"] = {{"abs_error_ms", {{"p50", 7.5}}},
                        {"ape_pct", {{"p50", 12.0}}},
                        {"due_mean_signed_error_ms", -40.0}};
  s["replicas"] = {{{"busy_fraction", 0.5}}, {{"busy_fraction", 1.0}}};
  s["energy_j"] = nullptr;
  s["energy_j_per_output_token"] = nullptr;
  const auto v = flatten_summary(s);
  REQUIRE(v.size() == metric_names().size());
  auto at = [&](const char* name) { return v[*metric_index(name)]; };
  CHECK(at("rejected") == 1);
  CHECK(at("output_tok_s") == 20);
  CHECK(at("total_tok_s") == 220);
  CHECK(at("ttft_p99_ms") == 4);
  CHECK(at("e2e_p95_ms") == 3.5);
  CHECK(std::isnan(at("tbt_p99_ms")));
  CHECK(at("scheduling_delay_max_ms") == 5);
  CHECK(at("attainment") == 0.9);
  CHECK(at("goodput_req_s") == 1.8);
  CHECK(at("busy_fraction") == 0.75);
  CHECK(std::isnan(at("energy_j")));
  CHECK(at("rejected_by_admission") == 1);
  CHECK(at("demoted") == 3);
  CHECK(at("served_past_deadline") == 2);
  CHECK(at("wait_est_abs_error_p50_ms") == 7.5);
  CHECK(at("wait_est_ape_p50_pct") == 12.0);
  CHECK(at("due_est_mean_signed_error_ms") == -40.0);
  CHECK_FALSE(metric_index("tbt_p999_ms"));
  s["slo"] = nullptr;
  s["wait_estimate"] = nullptr;
  CHECK(std::isnan(flatten_summary(s)[*metric_index("attainment")]));
  CHECK(std::isnan(flatten_summary(s)[*metric_index("wait_est_ape_p50_pct")]));
}
