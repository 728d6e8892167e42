// The agentic workload driven by hand, and the closed-loop workloads' bad-input errors.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/workloads/test_support.hpp"
#include "workloads/closed_loop_base.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using servesim::test::error_of;
using servesim::test::make;

namespace {

std::string agentic_yaml(const std::string& extra) {
  return "workload:\n  arrival: {kind: static, qps: 1}\n  agentic: {num_tasks: 1, "
         "root: {kind: fixed, prompt_tokens: 1000, output_tokens: 100}, "
         "fan_out: {kind: uniform, min: 2, max: 6}, "
         "tool_calls: {kind: uniform, min_tokens: 40, max_tokens: 400, prefill_decode_ratio: 1}" +
         extra + "}\n";
}

std::vector<RequestSpec> yielded(Workload& w) {
  std::vector<RequestSpec> out;
  while (auto r = w.next()) out.push_back(*r);
  return out;
}

}  // namespace

TEST_CASE("An agent's tool calls fan out when its root completes and share the root's context",
          "[workloads][agentic]") {
  auto w = make(agentic_yaml(", aggregate: {kind: fixed, prompt_tokens: 30, output_tokens: 200}"));
  auto* loop = dynamic_cast<ClosedLoopWorkload*>(w.get());
  REQUIRE(loop != nullptr);
  const auto root = yielded(*w);
  REQUIRE(root.size() == 1);
  CHECK(root[0].turn == 0);
  CHECK(root[0].prompt_tokens == 1000);
  const SimTime done = root[0].arrival + seconds_to_sim(2.0);
  loop->on_request_done(root[0], done, false);
  const auto calls = yielded(*w);
  REQUIRE(calls.size() >= 2);
  REQUIRE(calls.size() <= 6);
  const std::int32_t context = 1000 + 100;
  std::int64_t tool_output = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const RequestSpec& c = calls[i];
    CHECK(c.arrival == done);
    CHECK(c.session == 0);
    CHECK(c.turn == static_cast<std::int32_t>(i + 1));
    CHECK(c.prompt_tokens > context);
    tool_output += c.output_tokens;
    // The root prompt's whole hash blocks, then the context's, are common to all of them.
    for (std::size_t j = 0; j < 1000 / kSessionHashTokens; ++j) {
      CHECK(c.hashes->chain[j] == root[0].hashes->chain[j]);
    }
    const std::size_t shared = context / kSessionHashTokens;
    for (std::size_t j = 0; j < shared; ++j) {
      CHECK(c.hashes->chain[j] == calls[0].hashes->chain[j]);
    }
    // The root's hashes run over its reply too, so the whole context is common with the root;
    // a call's reply is reused by no later request, so its hashes stop at its prompt.
    REQUIRE(root[0].hashes->chain.size() ==
            (context + kSessionHashTokens - 1) / kSessionHashTokens);
    for (std::size_t j = 0; j < shared; ++j) {
      CHECK(c.hashes->chain[j] == root[0].hashes->chain[j]);
    }
    CHECK(root[0].hashes_cover_output);
    CHECK_FALSE(c.hashes_cover_output);
    // Past the context each call is its own.
    if (i > 0) CHECK(c.hashes->chain[shared] != calls[0].hashes->chain[shared]);
  }
  // The aggregation waits for every tool call.
  for (std::size_t i = 0; i + 1 < calls.size(); ++i) {
    loop->on_request_done(calls[i], done + seconds_to_sim(1.0), false);
    CHECK(yielded(*w).empty());
  }
  const SimTime last = done + seconds_to_sim(3.0);
  loop->on_request_done(calls.back(), last, false);
  const auto agg = yielded(*w);
  REQUIRE(agg.size() == 1);
  CHECK(agg[0].arrival == last);
  CHECK(agg[0].turn == static_cast<std::int32_t>(calls.size() + 1));
  CHECK(agg[0].prompt_tokens == context + tool_output + 30);
  loop->on_request_done(agg[0], last + 5, false);
  const SessionCounts* c = session_counts(*w);
  CHECK(c->completed == 1);
  CHECK(c->requests_finished == static_cast<std::int64_t>(calls.size()) + 2);
}

TEST_CASE("Closed-loop workloads are deterministic for a seed", "[workloads][agentic][sessions]") {
  const auto run = [](std::uint64_t seed) {
    auto w = make(agentic_yaml(""), seed);
    auto* loop = dynamic_cast<ClosedLoopWorkload*>(w.get());
    std::vector<RequestSpec> all = yielded(*w);
    loop->on_request_done(all[0], 7, false);
    for (const RequestSpec& r : yielded(*w)) all.push_back(r);
    std::vector<std::int64_t> out;
    for (const RequestSpec& r : all) {
      out.insert(out.end(), {r.arrival, r.prompt_tokens, r.output_tokens, r.turn});
    }
    return out;
  };
  CHECK(run(3) == run(3));
  CHECK(run(3) != run(4));
}

TEST_CASE("Bad closed-loop workload keys name their position", "[workloads][sessions][errors]") {
  const std::string lengths = "lengths: {kind: fixed, prompt_tokens: 10, output_tokens: 5}";
  const std::string turns = "turns: {kind: fixed, count: 2}";
  const auto sessions = [](const std::string& body) {
    return "workload:\n  arrival: {kind: poisson, qps: 1}\n  sessions: {" + body + "}\n";
  };
  CHECK_THAT(error_of(sessions("num_sessions: 3, " + turns + ", " + lengths + ", thinks: 1")),
             StartsWith("test.yaml:3:") && Contains("thinks"));
  CHECK_THAT(error_of(sessions("num_sessions: 3, turns: {kind: poisson, count: 2}, " + lengths)),
             Contains("unknown workload.sessions.turns kind 'poisson'"));
  CHECK_THAT(
      error_of(sessions("num_sessions: 3, turns: {kind: uniform, min: 4, max: 2}, " + lengths)),
      Contains("below min 4"));
  CHECK_THAT(error_of(sessions("num_sessions: 3, turns: {kind: fixed, count: 0}, " + lengths)),
             Contains("expected a count in [1, 100000]"));
  CHECK_THAT(error_of(sessions("num_sessions: 3, turns: {kind: geometric, mean: 0.5, max: 9}, " +
                               lengths)),
             Contains("expected a mean in [1, 100000]"));
  CHECK_THAT(
      error_of(sessions("num_sessions: 3, " + turns + ", " + lengths + ", think_time_s: -1")),
      StartsWith("test.yaml:3:") && Contains("think_time_s"));
  CHECK_THAT(
      error_of(sessions("num_sessions: 3, " + turns + ", " + lengths + ", think_time_s: 1e9")),
      Contains("too long"));
  CHECK_THAT(
      error_of(sessions("num_sessions: 3, " + turns + ", " + lengths + ", max_prompt_tokens: 0")),
      StartsWith("test.yaml:3:") && Contains("expected a positive integer"));
  CHECK_THAT(error_of(sessions("num_sessions: 3, " + turns +
                               ", lengths: {kind: shared_prefix_chat, num_groups: 1, "
                               "users_per_group: 1, question_tokens: 5, output_tokens: 5}")),
             Contains("cannot be of kind 'shared_prefix_chat'"));
  CHECK_THAT(error_of(sessions(turns + ", " + lengths)), Contains("never stop starting"));
  CHECK_THAT(error_of("workload:\n  sessions: {num_sessions: 1, " + turns + ", " + lengths + "}\n"),
             Contains("needs 'arrival'"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 1}\n  max_tokens: 4\n"
                      "  sessions: {num_sessions: 1, " +
                      turns + ", " + lengths + "}\n"),
             StartsWith("test.yaml:3:") && Contains("cannot be combined with 'sessions'"));
  CHECK_THAT(error_of(agentic_yaml(", sessions: 1")), Contains("sessions"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 1}\n  agentic: {num_tasks: 1, "
                      "root: {kind: fixed, prompt_tokens: 10, output_tokens: 5}, "
                      "fan_out: {kind: fixed, count: 0}, tool_calls: " +
                      lengths.substr(9) + "}\n"),
             Contains("fan_out"));
}
