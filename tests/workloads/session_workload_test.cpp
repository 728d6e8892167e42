// The closed-loop workloads (sessions, agentic) driven by hand: the test plays the engine, telling
// the workload when each request completes.
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/workloads/test_support.hpp"
#include "workloads/closed_loop_base.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using servesim::test::error_of;
using servesim::test::make;

namespace {

ClosedLoopWorkload& loop_of(Workload& w) {
  auto* loop = dynamic_cast<ClosedLoopWorkload*>(&w);
  REQUIRE(loop != nullptr);
  return *loop;
}

std::string sessions_yaml(const std::string& sessions, const std::string& arrival = "poisson") {
  return "workload:\n  arrival: {kind: " + arrival + ", qps: 2}\n  sessions: {" + sessions + "}\n";
}

// Plays a server that completes every request `service` after it arrives, in arrival order, and
// returns everything yielded.
std::vector<RequestSpec> play(Workload& w, SimTime service) {
  ClosedLoopWorkload& loop = loop_of(w);
  std::vector<RequestSpec> out;
  std::multimap<SimTime, RequestSpec> in_flight;  // by completion time
  std::optional<RequestSpec> next = w.next();
  while (next || !in_flight.empty()) {
    if (next && (in_flight.empty() || next->arrival < in_flight.begin()->first)) {
      out.push_back(*next);
      in_flight.emplace(next->arrival + service, *next);
      next = w.next();
      continue;
    }
    const auto [done_at, spec] = *in_flight.begin();
    in_flight.erase(in_flight.begin());
    if (next) loop.give_back(*next);
    loop.on_request_done(spec, done_at, false);
    next = w.next();
  }
  return out;
}

}  // namespace

TEST_CASE("A session's next turn is its history plus a new message, a think time after it ends",
          "[workloads][sessions]") {
  auto w = make(sessions_yaml(
      "num_sessions: 1, turns: {kind: fixed, count: 3}, think_time_s: 2, "
      "lengths: {kind: uniform, min_tokens: 20, max_tokens: 200, prefill_decode_ratio: 1}"));
  ClosedLoopWorkload& loop = loop_of(*w);
  auto t0 = w->next();
  REQUIRE(t0);
  CHECK(t0->session == 0);
  CHECK(t0->turn == 0);
  CHECK(t0->prefix_tokens == t0->prompt_tokens);
  CHECK_FALSE(w->next());  // one session; its next turn waits for this one to complete
  const SimTime done0 = t0->arrival + seconds_to_sim(1.0);
  loop.on_request_done(*t0, done0, false);
  auto t1 = w->next();
  REQUIRE(t1);
  CHECK(t1->turn == 1);
  CHECK(t1->arrival >= done0);
  // History (turn 0's prompt and output) plus a new message of the uniform lengths' prompt part.
  const std::int32_t message = t1->prompt_tokens - t0->prompt_tokens - t0->output_tokens;
  CHECK(message >= 10);
  CHECK(message <= 100);
  // Turn 0's hashes cover its prompt and its reply; their whole blocks are turn 1's first ones.
  CHECK(t0->hashes_cover_output);
  const std::int32_t sequence0 = t0->prompt_tokens + t0->output_tokens;
  CHECK(t0->hashes->chain.size() ==
        static_cast<std::size_t>((sequence0 + kSessionHashTokens - 1) / kSessionHashTokens));
  const auto blocks0 = static_cast<std::size_t>(sequence0 / kSessionHashTokens);
  REQUIRE(t1->hashes->chain.size() >= blocks0);
  for (std::size_t j = 0; j < blocks0; ++j) CHECK(t1->hashes->chain[j] == t0->hashes->chain[j]);
  CHECK(t1->hashes->chain.size() ==
        static_cast<std::size_t>((t1->prompt_tokens + t1->output_tokens + kSessionHashTokens - 1) /
                                 kSessionHashTokens));
  loop.on_request_done(*t1, t1->arrival + seconds_to_sim(1.0), false);
  auto t2 = w->next();
  REQUIRE(t2);
  CHECK(t2->turn == 2);
  loop.on_request_done(*t2, t2->arrival + seconds_to_sim(3.0), false);
  CHECK_FALSE(w->next());
  const SessionCounts* c = session_counts(*w);
  REQUIRE(c != nullptr);
  CHECK(c->started == 1);
  CHECK(c->completed == 1);
  CHECK(c->requests_finished == 3);
  CHECK(c->mean_session_s() == Approx(sim_to_s(t2->arrival + seconds_to_sim(3.0) - t0->arrival)));
}

TEST_CASE("Sessions draw their turns and think times from the stated distributions",
          "[workloads][sessions]") {
  auto w = make(sessions_yaml(
      "num_sessions: 4000, turns: {kind: geometric, mean: 3, max: 1000}, think_time_s: 5, "
      "lengths: {kind: fixed, prompt_tokens: 50, output_tokens: 20}"));
  const SimTime service = seconds_to_sim(1.0);
  const auto r = play(*w, service);
  std::map<std::int64_t, std::vector<RequestSpec>> by_session;
  for (const RequestSpec& s : r) by_session[s.session].push_back(s);
  REQUIRE(by_session.size() == 4000);
  double gaps = 0;
  std::int64_t n_gaps = 0;
  for (const auto& [id, turns] : by_session) {
    for (std::size_t k = 0; k < turns.size(); ++k) {
      CHECK(turns[k].turn == static_cast<std::int32_t>(k));
      CHECK(turns[k].prompt_tokens == 50 + 70 * static_cast<std::int32_t>(k));
      if (k == 0) continue;
      const SimTime ended = turns[k - 1].arrival + service;
      REQUIRE(turns[k].arrival >= ended);
      gaps += sim_to_s(turns[k].arrival - ended);
      ++n_gaps;
    }
  }
  CHECK(static_cast<double>(r.size()) / 4000.0 == Approx(3).epsilon(0.05));
  CHECK(gaps / static_cast<double>(n_gaps) == Approx(5).epsilon(0.05));
  CHECK(session_counts(*w)->completed == 4000);
}

TEST_CASE("A session stops before a prompt longer than max_prompt_tokens and after a refusal",
          "[workloads][sessions]") {
  auto w = make(
      sessions_yaml("num_sessions: 2, turns: {kind: fixed, count: 10}, max_prompt_tokens: 250, "
                    "lengths: {kind: fixed, prompt_tokens: 50, output_tokens: 50}",
                    "static"));
  ClosedLoopWorkload& loop = loop_of(*w);
  auto a = w->next();
  auto b = w->next();
  REQUIRE((a && b));
  CHECK(b->session == 1);
  loop.on_request_done(*b, b->arrival + 1, /*rejected=*/true);  // session 1 ends here
  std::vector<std::int32_t> prompts{a->prompt_tokens};
  loop.on_request_done(*a, a->arrival + 1, false);
  while (auto t = w->next()) {
    REQUIRE(t->session == 0);
    prompts.push_back(t->prompt_tokens);
    loop.on_request_done(*t, t->arrival + 1, false);
  }
  // 50, 150, 250; the next would be 350.
  CHECK(prompts == std::vector<std::int32_t>{50, 150, 250});
  const SessionCounts* c = session_counts(*w);
  CHECK(c->completed == 1);
  CHECK(c->cut_at_max_prompt == 1);
  CHECK(c->ended_by_rejection == 1);
  CHECK(c->requests_finished == 3);
}

TEST_CASE("num_requests caps a closed-loop workload's requests, cutting sessions short",
          "[workloads][sessions]") {
  auto w = make(
      "workload:\n  arrival: {kind: poisson, qps: 2}\n  num_requests: 50\n  sessions: {"
      "turns: {kind: fixed, count: 4}, lengths: {kind: fixed, prompt_tokens: 5, "
      "output_tokens: 5}}\n");
  CHECK(w->expected_requests() == std::optional<std::int64_t>{50});
  const auto r = play(*w, seconds_to_sim(0.5));
  CHECK(r.size() == 50);
  const SessionCounts* c = session_counts(*w);
  CHECK(c->completed < c->started);
  CHECK(c->completed * 4 <= 50);
}
