// Closed-loop workloads in the engine, with the `fixed` cost model (10 µs per prefill token, 5 ms
// per decode step): the engine reports completions, the workload makes the follow-ups.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "sim/engine/engine.hpp"
#include "tests/workloads/test_support.hpp"
#include "workloads/closed_loop_base.hpp"

using namespace servesim;

namespace {

// What the engine did with each request of a session.
struct Turn {
  std::int64_t session = -1;
  std::int32_t turn = -1;
  SimTime arrival = -1;
  SimTime finished = -1;
  std::int32_t prompt = 0;
  std::int32_t cached = 0;
  ReplicaId replica = kNoReplica;
};

struct TurnRecorder : RunObserver {
  std::vector<Turn> done;
  void on_request_done(const Request& r, bool /*rejected*/) override {
    done.push_back({r.spec.session, r.spec.turn, r.spec.arrival, r.finished, r.spec.prompt_tokens,
                    r.cached_prefix, r.replica});
  }
};

struct Run {
  std::vector<Turn> turns;
  EngineTotals totals;
  std::int64_t hit_blocks = 0;
  std::int64_t query_blocks = 0;
};

// Runs `workload_yaml`'s workload on `replicas` vllm replicas (prefix caching on, 16-token blocks)
// routed by `router_yaml`.
Run run(const std::string& workload_yaml, const std::string& router_yaml, int replicas,
        std::uint64_t seed = 1, std::int64_t blocks = 4000) {
  SchedulerOptions o;
  o.max_num_batched_tokens = 16384;  // vLLM V0 schedules whole prompts: up to max_model_len
  o.max_num_seqs = 64;
  o.max_model_len = 16384;
  o.enable_prefix_caching = true;
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  for (int i = 0; i < replicas; ++i) {
    ReplicaSpec spec;
    spec.gpu = &gpu;
    spec.model = &model;
    fleet.push_back(std::make_unique<Replica>(
        i, spec, make_replica_scheduler(ConfigNode::parse("kind: vllm", "t.yaml"), o),
        KvCache(blocks, 16, 0.0), 16384));
    fleet.back()->kv.set_prefix_caching(true);
  }
  auto router = make_router(ConfigNode::parse(router_yaml, "t.yaml"), seed);
  auto workload = test::make(workload_yaml, seed);
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};
  TurnRecorder rec;
  Engine engine({fleet, *router, *workload, cost, {&rec}});
  Run out;
  out.totals = engine.run();
  out.turns = std::move(rec.done);
  for (const auto& r : fleet) {
    out.hit_blocks += r->kv.prefix_hit_blocks();
    out.query_blocks += r->kv.prefix_query_blocks();
  }
  return out;
}

std::string sessions(int n, const std::string& turns, double qps, double think_s = 1) {
  return "workload:\n  arrival: {kind: poisson, qps: " + std::to_string(qps) +
         "}\n  sessions: {num_sessions: " + std::to_string(n) + ", turns: " + turns +
         ", think_time_s: " + std::to_string(think_s) +
         ", lengths: {kind: uniform, min_tokens: 100, max_tokens: 800, "
         "prefill_decode_ratio: 3}}\n";
}

}  // namespace

TEST_CASE("A two-turn session hits exactly the first turn's whole prompt and reply blocks",
          "[workloads][sessions][engine]") {
  // Turn 0: prompt 40, output 10. Its prefill publishes blocks 0 and 1 (tokens 0–31); it finishes
  // with 40 + 10 − 1 = 49 tokens of KV (the last output token is never fed back) and publishes
  // block 2 (tokens 32–47: 8 prompt and 8 reply tokens); block 3 is partial.
  // Turn 1: prompt 40 + 10 + 40 = 90; it looks up ⌊89/16⌋ = 5 blocks and finds blocks 0–2.
  const Run r =
      run("workload:\n  arrival: {kind: static, qps: 1}\n  sessions: {num_sessions: 1, "
          "turns: {kind: fixed, count: 2}, lengths: {kind: fixed, prompt_tokens: 40, "
          "output_tokens: 10}}\n",
          "kind: round_robin", 1);
  REQUIRE(r.turns.size() == 2);
  CHECK(r.turns[0].prompt == 40);
  CHECK(r.turns[0].cached == 0);
  CHECK(r.turns[1].prompt == 90);
  CHECK(r.turns[1].cached == 48);
  CHECK(r.query_blocks == 2 + 5);
  CHECK(r.hit_blocks == 3);
  // think_time_s 0: turn 1 arrives the instant turn 0 finishes.
  CHECK(r.turns[1].arrival == r.turns[0].finished);
}

TEST_CASE("The next turn finds the previous turn's prompt and its reply's whole blocks cached",
          "[workloads][sessions][engine]") {
  // Turn 0: prompt 32 (blocks 0–1), output 40; it ends with 32 + 40 − 1 = 71 tokens of KV, so
  // blocks 2 and 3 (tokens 32–63) are whole blocks of its reply and block 4 is partial.
  // Turn 1: prompt 32 + 40 + 32 = 104; it looks up ⌊103/16⌋ = 6 blocks and finds 0–3: the
  // prompt's 32 tokens and 32 of the reply. Only the rest (104 − 64 = 40 tokens) is prefilled.
  const Run r =
      run("workload:\n  arrival: {kind: static, qps: 1}\n  sessions: {num_sessions: 1, "
          "turns: {kind: fixed, count: 2}, lengths: {kind: fixed, prompt_tokens: 32, "
          "output_tokens: 40}}\n",
          "kind: round_robin", 1);
  REQUIRE(r.turns.size() == 2);
  CHECK(r.turns[0].cached == 0);
  CHECK(r.turns[1].prompt == 104);
  CHECK(r.turns[1].cached == 32 + 2 * 16);
  CHECK(r.query_blocks == 1 + 6);  // turn 0 looks up ⌊31/16⌋ = 1 block
  CHECK(r.hit_blocks == 4);
}

TEST_CASE("In the engine a turn never arrives before the previous one completes",
          "[workloads][sessions][engine]") {
  const Run r =
      run(sessions(300, "{kind: geometric, mean: 4, max: 30}", 5.0), "kind: round_robin", 4);
  std::map<std::pair<std::int64_t, std::int32_t>, Turn> by;
  for (const Turn& t : r.turns) by[{t.session, t.turn}] = t;
  REQUIRE(by.size() == r.turns.size());
  CHECK(r.totals.arrived == static_cast<std::int64_t>(r.turns.size()));
  CHECK(r.totals.finished == r.totals.arrived);
  std::int64_t sessions_seen = 0;
  for (const auto& [key, t] : by) {
    if (key.second == 0) {
      ++sessions_seen;
      continue;
    }
    const Turn& before = by.at({key.first, key.second - 1});
    CHECK(t.arrival >= before.finished);
    CHECK(t.prompt > before.prompt);
  }
  CHECK(sessions_seen == 300);
}

TEST_CASE("session_affinity keeps a session on one replica and hits more prefix than round robin",
          "[workloads][sessions][engine][routers]") {
  const std::string w = sessions(200, "{kind: fixed, count: 5}", 4.0);
  const Run sticky = run(w, "kind: session_affinity\noverload_factor: 1000", 4);
  std::map<std::int64_t, ReplicaId> home;
  for (const Turn& t : sticky.turns) {
    const auto [it, first] = home.emplace(t.session, t.replica);
    CHECK(it->second == t.replica);
  }
  CHECK(home.size() == 200);
  const Run rr = run(w, "kind: round_robin", 4);
  REQUIRE(sticky.totals.finished == rr.totals.finished);
  // Sticky sessions find their history every turn after the first; spread ones rarely do.
  CHECK(static_cast<double>(sticky.hit_blocks) > 2.0 * static_cast<double>(rr.hit_blocks));
}

TEST_CASE("prefix_aware reading scraped cache summaries finds sessions' 16-token hash blocks",
          "[workloads][sessions][engine][routers]") {
  // The scrape summary keeps one id per 32 KV blocks (one per 512-token Mooncake hash block); a
  // session's prompt is matched against it at those blocks, so turns follow their history.
  const std::string w = sessions(200, "{kind: fixed, count: 5}", 4.0);
  const Run scraped = run(w, "kind: prefix_aware\nscrape_interval_ms: 100", 4);
  const Run rr = run(w, "kind: round_robin", 4);
  REQUIRE(scraped.totals.finished == rr.totals.finished);
  CHECK(static_cast<double>(scraped.hit_blocks) > 2.0 * static_cast<double>(rr.hit_blocks));
}

TEST_CASE("Closed-loop runs are deterministic for a seed", "[workloads][sessions][engine]") {
  const std::string w = sessions(50, "{kind: uniform, min: 1, max: 6}", 3.0);
  const auto key = [](const Run& r) {
    std::vector<std::int64_t> v;
    for (const Turn& t : r.turns) v.insert(v.end(), {t.session, t.turn, t.arrival, t.finished});
    return v;
  };
  CHECK(key(run(w, "kind: session_affinity", 3, 9)) == key(run(w, "kind: session_affinity", 3, 9)));
  CHECK(key(run(w, "kind: session_affinity", 3, 9)) !=
        key(run(w, "kind: session_affinity", 3, 10)));
}

TEST_CASE("An agent task's tool calls start when its root completes and hit its prompt",
          "[workloads][agentic][engine]") {
  const Run r =
      run("workload:\n  arrival: {kind: static, qps: 0.5}\n  agentic: {num_tasks: 3, "
          "root: {kind: fixed, prompt_tokens: 1000, output_tokens: 20}, "
          "fan_out: {kind: fixed, count: 4}, "
          "tool_calls: {kind: fixed, prompt_tokens: 64, output_tokens: 8}, "
          "aggregate: {kind: fixed, prompt_tokens: 16, output_tokens: 30}}\n",
          "kind: session_affinity\noverload_factor: 8", 2);
  REQUIRE(r.turns.size() == 3 * 6);
  std::map<std::pair<std::int64_t, std::int32_t>, Turn> by;
  for (const Turn& t : r.turns) by[{t.session, t.turn}] = t;
  for (std::int64_t task = 0; task < 3; ++task) {
    const Turn& root = by.at({task, 0});
    SimTime last_call = 0;
    for (std::int32_t i = 1; i <= 4; ++i) {
      const Turn& call = by.at({task, i});
      CHECK(call.arrival == root.finished);
      CHECK(call.prompt == 1020 + 64);
      // Same replica as the root, which ended with 1000 + 20 − 1 = 1019 tokens of KV: its 63
      // whole blocks (the prompt and the start of the reply, the context) are cached; block 63
      // holds the call's own suffix.
      CHECK(call.replica == root.replica);
      CHECK(call.cached == 63 * 16);
      last_call = std::max(last_call, call.finished);
    }
    const Turn& agg = by.at({task, 5});
    CHECK(agg.arrival == last_call);
    CHECK(agg.prompt == 1020 + 4 * 8 + 16);
  }
}
