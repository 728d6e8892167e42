// Closed-loop workloads behind the workloads that wrap another (the multi-LoRA adapter draw, the
// `prompt_tokens` filter), in the engine with the `fixed` cost model (10 µs per prefill token,
// 5 ms per decode step): the engine reaches the closed-loop role through the wrapper
// (Workload::closed_loop) and every turn of every session arrives or is counted as left out.
// And the reply blocks a turn publishes, found again through a CPU KV tier.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/kv_offload.hpp"
#include "sim/engine/lora_cache.hpp"
#include "tests/workloads/test_support.hpp"
#include "workloads/closed_loop_base.hpp"
#include "workloads/lora_adapter_workload.hpp"
#include "workloads/prompt_filter.hpp"

using namespace servesim;

namespace {

struct Served {
  std::int64_t session = -1;
  std::int32_t turn = -1;
  std::int32_t prompt = 0;
  std::int32_t adapter = -1;
  SimTime arrival = -1;
  SimTime finished = -1;
  std::int32_t cached = 0;
  std::int32_t preemptions = 0;
};

struct Recorder : RunObserver {
  std::vector<Served> done;
  void on_request_done(const Request& r, bool /*rejected*/) override {
    done.push_back({r.spec.session, r.spec.turn, r.spec.prompt_tokens, r.spec.adapter,
                    r.spec.arrival, r.finished, r.cached_prefix, r.preemptions});
  }
};

struct Result {
  std::map<std::pair<std::int64_t, std::int32_t>, Served> by_turn;  // (session, turn)
  std::size_t served = 0;
  EngineTotals totals;
  std::int64_t cpu_hit_blocks = 0;
};

struct Setup {
  int replicas = 2;
  std::int64_t gpu_blocks = 4000;
  bool lora = false;
  bool cpu_tier = false;  // a CPU KV tier large enough to keep every block the GPU evicts
};

// Runs `workload` on vllm replicas (prefix caching on, 16-token blocks) routed by session
// affinity; with `lora`, each replica serves adapters from a two-slot LoraCache.
Result run(Workload& workload, const Setup& f) {
  SchedulerOptions o;
  o.max_num_batched_tokens = 16384;
  o.max_num_seqs = 64;
  o.max_model_len = 16384;
  o.enable_prefix_caching = true;
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  std::vector<std::unique_ptr<LoraCache>> caches;
  for (int i = 0; i < f.replicas; ++i) {
    ReplicaSpec spec;
    spec.gpu = &gpu;
    spec.model = &model;
    fleet.push_back(std::make_unique<Replica>(
        i, spec, make_replica_scheduler(ConfigNode::parse("kind: vllm", "t.yaml"), o),
        KvCache(f.gpu_blocks, 16, 0.0), 16384));
    fleet.back()->kv.set_prefix_caching(true);
    if (f.cpu_tier)
      fleet.back()->kv.set_offload(std::make_shared<KvOffload>(1'000'000, 1e6, 1e3, false));
    if (f.lora) {
      LoraCache::Options lo;
      lo.max_loras = 2;
      lo.max_cpu_loras = 4;
      caches.push_back(
          std::make_unique<LoraCache>(lo, std::vector<double>{4e6}, std::vector<double>{8e6}));
      REQUIRE(fleet.back()->scheduler->attach_lora(caches.back().get()));
    }
  }
  auto router = make_router(ConfigNode::parse("kind: session_affinity", "t.yaml"), 1);
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};
  Recorder rec;
  Engine engine({fleet, *router, workload, cost, {&rec}});
  Result out;
  out.totals = engine.run();
  out.served = rec.done.size();
  for (const Served& s : rec.done) out.by_turn[{s.session, s.turn}] = s;
  for (const auto& r : fleet) {
    if (const KvOffload* tier = r->kv.offload()) out.cpu_hit_blocks += tier->cpu_hit_blocks();
  }
  return out;
}

// `sessions` sessions of five turns each: a 100-token message and a 50-token reply per turn, so
// turn k's prompt is 100 + 150·k (100, 250, 400, 550, 700); no think time.
std::string five_turns(int sessions, const std::string& extra = "") {
  return "workload:\n  arrival: {kind: poisson, qps: 4}\n  sessions: {num_sessions: " +
         std::to_string(sessions) +
         ", turns: {kind: fixed, count: 5}, lengths: {kind: fixed, prompt_tokens: 100, "
         "output_tokens: 50}}\n" +
         extra;
}

LoraConfig eight_adapters() {
  LoraConfig c;
  c.num_adapters = 8;
  c.ranks = {16};
  c.zipf_s = 0.5;
  c.base_fraction = 0.2;
  return c;
}

}  // namespace

TEST_CASE("Sessions behind the LoRA adapter draw run every turn, each on its session's adapter",
          "[workloads][sessions][lora][engine]") {
  LoraAdapterWorkload w(test::make(five_turns(60)), eight_adapters(), 7);
  REQUIRE(w.closed_loop() != nullptr);
  const Result r = run(w, {.lora = true});
  CHECK(r.totals.finished == 60 * 5);
  CHECK(r.totals.rejected == 0);
  REQUIRE(r.served == 60 * 5);
  REQUIRE(r.by_turn.size() == 60 * 5);
  std::set<std::int32_t> adapters;
  for (std::int64_t s = 0; s < 60; ++s) {
    const std::int32_t first = r.by_turn.at({s, 0}).adapter;
    CHECK(first == w.session_adapter(s));
    adapters.insert(first);
    for (std::int32_t k = 1; k < 5; ++k) {
      const Served& t = r.by_turn.at({s, k});
      CHECK(t.adapter == first);
      CHECK(t.prompt == 100 + 150 * k);
      CHECK(t.arrival >= r.by_turn.at({s, k - 1}).finished);
    }
  }
  // The draw still spreads sessions over the base model and several adapters.
  CHECK(adapters.size() >= 4);
  const SessionCounts* c = session_counts(w);
  REQUIRE(c != nullptr);
  CHECK(c->completed == 60);
  CHECK(c->requests_finished == 60 * 5);
}

TEST_CASE("A request the engine hands back keeps its session's adapter when yielded again",
          "[workloads][sessions][lora]") {
  LoraAdapterWorkload w(test::make(five_turns(3)), eight_adapters(), 7);
  ClosedLoopWorkload* loop = w.closed_loop();
  REQUIRE(loop != nullptr);
  const auto first = w.next();
  REQUIRE(first);
  loop->give_back(*first);
  const auto again = w.next();
  REQUIRE(again);
  CHECK(again->session == first->session);
  CHECK(again->adapter == first->adapter);
  CHECK(again->adapter == w.session_adapter(first->session));
}

TEST_CASE("Sessions behind a prompt filter go on past the turns it leaves out",
          "[workloads][sessions][engine]") {
  SECTION("min: the first two turns of each session are left out, the last three served") {
    auto w = test::make(five_turns(40, "  prompt_tokens: {min: 300}\n"));
    REQUIRE(w->closed_loop() != nullptr);
    const Result r = run(*w, {});
    CHECK(r.totals.finished == 40 * 3);
    REQUIRE(r.served == 40 * 3);
    for (std::int64_t s = 0; s < 40; ++s) {
      for (std::int32_t k = 2; k < 5; ++k) CHECK(r.by_turn.count({s, k}) == 1);
      // A turn left out counts as finished at its arrival: with no think time turn 2 comes at
      // the session's start, and turn 3 waits for turn 2 as usual.
      CHECK(r.by_turn.at({s, 3}).arrival == r.by_turn.at({s, 2}).finished);
    }
    const SessionCounts* c = session_counts(*w);
    REQUIRE(c != nullptr);
    CHECK(c->started == 40);
    CHECK(c->completed == 40);
    CHECK(c->requests_finished == 40 * 3);
    CHECK(c->requests_left_out == 40 * 2);
    const auto* f = dynamic_cast<const PromptFilterWorkload*>(w.get());
    REQUIRE(f != nullptr);
    CHECK(f->left_out() == 40 * 2);
  }
  SECTION("max: the last three turns are left out and every session still ends") {
    auto w = test::make(five_turns(40, "  prompt_tokens: {max: 300}\n"));
    const Result r = run(*w, {});
    CHECK(r.totals.finished == 40 * 2);
    REQUIRE(r.served == 40 * 2);
    for (std::int64_t s = 0; s < 40; ++s) {
      CHECK(r.by_turn.count({s, 0}) == 1);
      CHECK(r.by_turn.count({s, 1}) == 1);
    }
    const SessionCounts* c = session_counts(*w);
    REQUIRE(c != nullptr);
    CHECK(c->completed == 40);
    CHECK(c->requests_finished == 40 * 2);
    CHECK(c->requests_left_out == 40 * 3);
  }
}

TEST_CASE("Agent tasks behind a prompt filter go on when their root is left out",
          "[workloads][agentic][engine]") {
  // Roots of 1,000 tokens are left out; the tool calls (1,020 + 64 tokens) and the aggregation
  // (1,020 + 3 × 8 + 16) are served, as if the root had finished at its arrival.
  auto w = test::make(
      "workload:\n  arrival: {kind: static, qps: 1}\n  agentic: {num_tasks: 5, "
      "root: {kind: fixed, prompt_tokens: 1000, output_tokens: 20}, "
      "fan_out: {kind: fixed, count: 3}, "
      "tool_calls: {kind: fixed, prompt_tokens: 64, output_tokens: 8}, "
      "aggregate: {kind: fixed, prompt_tokens: 16, output_tokens: 30}}\n"
      "  prompt_tokens: {min: 1001}\n");
  const Result r = run(*w, {});
  CHECK(r.totals.finished == 5 * 4);
  for (std::int64_t task = 0; task < 5; ++task) {
    CHECK(r.by_turn.count({task, 0}) == 0);
    for (std::int32_t i = 1; i <= 3; ++i) CHECK(r.by_turn.at({task, i}).prompt == 1020 + 64);
    CHECK(r.by_turn.at({task, 4}).prompt == 1020 + 3 * 8 + 16);
  }
  const SessionCounts* c = session_counts(*w);
  REQUIRE(c != nullptr);
  CHECK(c->completed == 5);
  CHECK(c->requests_left_out == 5);
}

TEST_CASE("Through a CPU tier every turn still finds the previous prompt and reply blocks",
          "[workloads][sessions][engine][kv_offload]") {
  // One replica whose GPU holds 40 blocks (640 tokens) serves 20 sessions of 4 turns (message
  // 32, reply 40: prompts 32, 104, 176, 248) at once, so the GPU evicts history between turns.
  // The tier keeps every evicted block, so turn k finds all of turn k − 1's whole blocks: its
  // prompt and reply, ⌊(prompt + 40 − 1)/16⌋ blocks (a request preempted since is skipped: its
  // lookup at resumption counts its own progress too).
  const std::string w =
      "workload:\n  arrival: {kind: poisson, qps: 50}\n  sessions: {"
      "num_sessions: 20, turns: {kind: fixed, count: 4}, lengths: {kind: "
      "fixed, prompt_tokens: 32, output_tokens: 40}}\n";
  auto with_tier = test::make(w);
  const Result r = run(*with_tier, {.replicas = 1, .gpu_blocks = 40, .cpu_tier = true});
  REQUIRE(r.served == 20 * 4);
  CHECK(r.cpu_hit_blocks > 0);
  int checked = 0;
  for (const auto& [key, t] : r.by_turn) {
    if (key.second == 0 || t.preemptions > 0) continue;
    const std::int32_t before = 32 + 72 * (key.second - 1);
    CHECK(t.prompt == before + 72);
    CHECK(t.cached == (before + 40 - 1) / 16 * 16);
    ++checked;
  }
  CHECK(checked >= 30);
  // Without the tier some turns lose part of their history to the GPU's evictions.
  auto without = test::make(w);
  const Result g = run(*without, {.replicas = 1, .gpu_blocks = 40});
  std::int64_t cached_tier = 0;
  std::int64_t cached_gpu = 0;
  for (const auto& [key, t] : r.by_turn) cached_tier += t.cached;
  for (const auto& [key, t] : g.by_turn) cached_gpu += t.cached;
  CHECK(cached_gpu < cached_tier);
}
