// The shared-prefix chat workload of the measured sim2real runs (inference-perf): staged
// arrivals with exactly rate × duration requests per stage, chat lengths with per-user prompts,
// and the trace options used to replay those runs.
#include <cmath>
#include <map>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "tests/workloads/test_support.hpp"
#include "workloads/arrival_process.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using servesim::test::drain;
using servesim::test::error_of;
using servesim::test::fixture;
using servesim::test::make;

namespace {

const std::string kChatLengths =
    "{kind: shared_prefix_chat, num_groups: 9, users_per_group: 5, system_prompt_tokens: 100, "
    "question_tokens: 447, output_tokens: 248}";

}  // namespace

TEST_CASE("staged arrivals hold exactly rate × duration requests inside each stage",
          "[workloads][stages]") {
  // experiments.csv's codegen run: 5 req/s for 600 s, then 10 req/s for 600 s; stage 1 starts
  // 4 s after stage 0 ends.
  auto w = make(
      "workload:\n  arrival: {kind: stages, gap_s: 4, stages: [{rate: 5.0, duration_s: 600}, "
      "{rate: 10.0, duration_s: 600}]}\n  lengths: " +
          kChatLengths + "\n",
      7);
  const auto r = drain(*w);
  REQUIRE(r.size() == 9000);
  const SimTime s1_start = seconds_to_sim(604.0);
  std::int64_t in0 = 0;
  std::int64_t in1 = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i > 0) REQUIRE(r[i].arrival >= r[i - 1].arrival);
    if (r[i].arrival < seconds_to_sim(600.0)) ++in0;
    if (r[i].arrival >= s1_start && r[i].arrival < s1_start + seconds_to_sim(600.0)) ++in1;
  }
  CHECK(in0 == 3000);
  CHECK(in1 == 6000);
  // Each stage starts with an arrival at its start (the first gap is normalized away).
  CHECK(r[0].arrival == 0);
  CHECK(r[3000].arrival == s1_start);
  // Gaps are exponential: coefficient of variation ≈ 1 (3000 gaps: ±0.1 is > 5 sigma).
  double sum = 0;
  double sum2 = 0;
  for (std::size_t i = 1; i < 3000; ++i) {
    const double g = sim_to_s(r[i].arrival - r[i - 1].arrival);
    sum += g;
    sum2 += g * g;
  }
  const double mean = sum / 2999;
  const double cv = std::sqrt(sum2 / 2999 - mean * mean) / mean;
  CHECK(mean == Approx(0.2).epsilon(0.01));
  CHECK(cv == Approx(1.0).margin(0.1));
}

TEST_CASE("staged arrivals are reproducible for a seed and differ between seeds",
          "[workloads][stages]") {
  const StagedArrivals spec{{{2.0, seconds_to_sim(10.0), 20}}, 0};
  ArrivalProcess a(spec, 3);
  ArrivalProcess b(spec, 3);
  ArrivalProcess c(spec, 4);
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    REQUIRE_FALSE(a.done());
    const SimTime ta = a.next();
    CHECK(ta == b.next());
    differs = differs || ta != c.next();
    CHECK(ta < seconds_to_sim(10.0));
  }
  CHECK(differs);
  CHECK(a.done());
}

TEST_CASE("shared-prefix chat lengths follow the means and name each user's prompt as its prefix",
          "[workloads][chat]") {
  auto w = make("workload:\n  arrival: {kind: poisson, qps: 10}\n  lengths: " + kChatLengths +
                "\n  num_requests: 4500\n");
  const auto r = drain(*w);
  REQUIRE(r.size() == 4500);
  std::map<std::int64_t, int> per_user;
  for (const auto& q : r) {
    REQUIRE(q.prompt_tokens == 547);
    REQUIRE(q.output_tokens == 248);
    REQUIRE(q.prefix_tokens == 547);
    REQUIRE(q.prefix_group >= 0);
    REQUIRE(q.prefix_group < 45);
    ++per_user[q.prefix_group];
  }
  CHECK(per_user.size() == 45);
  // Uniform users: 100 expected each; 4 sigma ≈ 40.
  for (const auto& [user, n] : per_user) {
    INFO("user " << user);
    CHECK(n > 60);
    CHECK(n < 140);
  }
}

TEST_CASE("a measured trace replays with whole-prompt prefixes by length and an output override",
          "[workloads][chat]") {
  auto w =
      make(fmt::format("workload:\n  trace: {{format: measured, file: '{}', output_tokens: "
                       "248}}\n  shared_prefix: {{group_by: prompt_length}}\n",
                       fixture("measured_small.csv")));
  const auto r = drain(*w);
  REQUIRE(r.size() == 4);
  CHECK(r[0].output_tokens == 248);
  CHECK(r[1].output_tokens == 248);
  CHECK(r[2].output_tokens == 1);  // has_error: a failed request keeps its (raised) zero
  CHECK(r[3].output_tokens == 248);
  CHECK(r[0].prefix_group == 591);
  CHECK(r[0].prefix_tokens == 591);
  CHECK(r[3].prefix_group == 600);
  CHECK(r[3].prefix_tokens == 600);
}

TEST_CASE("bad staged or chat workloads are errors that say what was expected",
          "[workloads][chat][bad-input]") {
  CHECK_THAT(error_of("workload:\n  arrival: {kind: stages, stages: [{rate: 2.5, duration_s: "
                      "3}]}\n  lengths: " +
                      kChatLengths + "\n"),
             Contains("rate × duration_s = 7.5 is not a whole number of requests"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: stages, stages: [{rate: 1e-8, duration_s: "
                      "10}]}\n  lengths: " +
                      kChatLengths + "\n"),
             Contains("gives no request (expected at least one per stage)"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: stages, stages: []}\n  lengths: " +
                      kChatLengths + "\n"),
             Contains("expected a list of stages"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 1}\n  lengths: " + kChatLengths +
                      "\n  num_requests: 3\n  shared_prefix: {num_groups: 2, "
                      "prefix_tokens: 10}\n"),
             Contains("cannot be combined with shared_prefix_chat or conversation lengths"));
  CHECK_THAT(error_of(fmt::format("workload:\n  trace: {{format: measured, file: '{}'}}\n  "
                                  "shared_prefix: {{group_by: user}}\n",
                                  fixture("measured_small.csv"))),
             Contains("unknown grouping 'user' (known: prompt_length)"));
}
