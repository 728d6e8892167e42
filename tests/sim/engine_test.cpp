// The engine with the `fixed` cost model: timelines small enough to check by hand.
#include "sim/engine/engine.hpp"

#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/output_writers.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace {

using test::ListWorkload;

// Records what the engine reports.
struct Recorder : RunObserver {
  std::vector<StepRecord> steps;
  std::vector<RequestRecord> done;
  std::vector<std::pair<RequestId, SimTime>> tokens;
  void on_step(const StepRecord& s, const BatchShape&, const StepCost&) override {
    steps.push_back(s);
  }
  void on_tokens(std::span<const TokenEvent> events, SimTime now) override {
    for (const TokenEvent& t : events) tokens.emplace_back(t.request->id, now);
  }
  void on_request_done(const Request& r, bool rejected) override {
    done.push_back(make_request_record(r, rejected));
  }
};

struct Fixture {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  RoundRobinRouter router;
  FixedCostModel cost{
      FixedCostModel::Params{10'000, 5'000'000, 0, 1}};  // 10 µs/token, 5 ms/decode step

  // `scheduler`: a kind for make_replica_scheduler; empty = SarathiScheduler built directly.
  explicit Fixture(std::int64_t blocks = 1000, int replicas = 1, std::int32_t max_len = 4096,
                   const std::string& scheduler = "") {
    gpu.name = "fake";
    model.name = "fake";
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = 8;
    o.max_model_len = max_len;
    for (int i = 0; i < replicas; ++i) {
      ReplicaSpec spec;
      spec.gpu = &gpu;
      spec.model = &model;
      std::unique_ptr<ReplicaScheduler> s =
          scheduler.empty()
              ? std::make_unique<SarathiScheduler>(o)
              : make_replica_scheduler(ConfigNode::parse("kind: " + scheduler, "test"), o);
      fleet.push_back(
          std::make_unique<Replica>(i, spec, std::move(s), KvCache(blocks, 16, 0.0), max_len));
    }
  }
};

RequestSpec spec(double arrival_ms, int prompt, int output) {
  return RequestSpec{ms_to_sim(arrival_ms), prompt, output, -1, 0};
}

}  // namespace

TEST_CASE("A lone request: one prefill step then one decode step per token", "[engine]") {
  Fixture f;
  ListWorkload w({spec(0, 100, 3)});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  const auto totals = engine.run();
  // Prefill 100 × 10 µs = 1 ms → first token at 1 ms; decodes of 5 ms → 6 ms, 11 ms.
  REQUIRE(rec.done.size() == 1);
  CHECK(rec.done[0].first_token_ns == ms_to_sim(1));
  CHECK(rec.done[0].finished_ns == ms_to_sim(11));
  CHECK(totals.steps == 3);
  CHECK(totals.end_time == ms_to_sim(11));
}

TEST_CASE("A request arriving mid-step joins the next step as a chunk beside decodes", "[engine]") {
  Fixture f;
  ListWorkload w({spec(0, 100, 3), spec(2, 200, 2)});
  Recorder rec;
  MetricsCollector metrics;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec, &metrics}});
  const auto totals = engine.run();
  // t=0: prefill A (1 ms). t=1: decode A (5 ms) → A token 2 at 6 ms. B arrived at 2 ms.
  // t=6: decode A + prefill B 200 → 5 ms + 2 ms = 7 ms → A token 3 (done) and B token 1 at 13.
  // t=13: decode B → 18 ms, B done.
  REQUIRE(rec.done.size() == 2);
  CHECK(rec.done[0].id == 0);
  CHECK(rec.done[0].finished_ns == ms_to_sim(13));
  CHECK(rec.done[1].first_scheduled_ns == ms_to_sim(6));
  CHECK(rec.done[1].first_token_ns == ms_to_sim(13));
  CHECK(rec.done[1].finished_ns == ms_to_sim(18));
  CHECK(totals.steps == 4);
  REQUIRE(rec.steps.size() == 4);
  CHECK(rec.steps[2].prefill_tokens == 200);
  CHECK(rec.steps[2].num_decodes == 1);
  CHECK(rec.steps[2].duration_ns == ms_to_sim(7));
  // TTFT 1 and 11 ms; TBT gaps 5, 7 (A) and 5 (B); E2E 13 and 16 ms.
  CHECK(metrics.ttft_ms().mean() == Approx(6.0));
  CHECK(metrics.tbt_ms().count() == 3);
  CHECK(metrics.tbt_ms().mean() == Approx(17.0 / 3.0));
  CHECK(metrics.tbt_ms().max() == Approx(7.0));
  CHECK(metrics.e2e_ms().mean() == Approx(14.5));
}

TEST_CASE("A request overhead adds to every TTFT and E2E but not to token gaps", "[engine]") {
  Fixture f;
  ListWorkload w({spec(0, 100, 3), spec(2, 200, 2)});
  MetricsCollector metrics({}, ms_to_sim(4));
  Engine engine({f.fleet, f.router, w, f.cost, {&metrics}});
  const auto totals = engine.run();
  // The timeline of the test above, seen by a client 4 ms later at first and last token.
  CHECK(metrics.ttft_ms().mean() == Approx(6.0 + 4));
  CHECK(metrics.e2e_ms().mean() == Approx(14.5 + 4));
  CHECK(metrics.tbt_ms().mean() == Approx(17.0 / 3.0));
  CHECK(metrics.tpot_ms().mean() == Approx((6.0 + 5.0) / 2));  // (E2E − TTFT) / (n − 1)
  CHECK(metrics.summary(totals, f.fleet)["request_overhead_ms"].get<double>() == Approx(4));
}

TEST_CASE("Requests arriving at one instant are batched together", "[engine]") {
  Fixture f;
  ListWorkload w({spec(0, 100, 1), spec(0, 100, 1), spec(0, 100, 1)});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  engine.run();
  REQUIRE(rec.steps.size() == 1);
  CHECK(rec.steps[0].num_prefills == 3);
  CHECK(rec.steps[0].prefill_tokens == 300);
  for (const auto& d : rec.done) CHECK(d.finished_ns == ms_to_sim(3));
}

TEST_CASE("A request that can never fit is rejected and counted, never dropped", "[engine]") {
  Fixture f(/*blocks=*/10, 1, /*max_len=*/4096);  // 160 tokens of KV
  ListWorkload w({spec(0, 100, 10), spec(1, 500, 10), spec(2, 10, 5000)});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  const auto totals = engine.run();
  CHECK(totals.arrived == 3);
  CHECK(totals.finished == 1);
  CHECK(totals.rejected == 2);
  CHECK(totals.arrived == totals.finished + totals.rejected);
  REQUIRE(rec.done.size() == 3);
  int rejected = 0;
  for (const auto& d : rec.done) rejected += d.rejected;
  CHECK(rejected == 2);
}

TEST_CASE("A request needs KV for prompt + output - 1 tokens: the last token is never written",
          "[engine]") {
  const std::string kind = GENERATE(as<std::string>{}, "sarathi", "vllm", "orca");
  INFO("scheduler " << kind);
  Fixture f(/*blocks=*/10, 1, /*max_len=*/4096, kind);  // 160 tokens of KV
  // 100 + 61: the 61st output token is sampled from the KV of 160 tokens and never stored.
  ListWorkload w({spec(0, 100, 61), spec(1, 100, 62)});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  const auto totals = engine.run();
  CHECK(totals.finished == 1);
  CHECK(totals.rejected == 1);
  REQUIRE(rec.done.size() == 2);
  for (const auto& d : rec.done) CHECK(d.rejected == (d.id == 1 ? 1 : 0));
  CHECK(totals.preemptions == 0);
  CHECK(f.fleet[0]->kv.free_blocks() == 10);
}

TEST_CASE("Preempted requests recompute and still finish and all KV returns", "[engine]") {
  Fixture f(/*blocks=*/12);  // 192 tokens: four 40+40 requests cannot all decode at once
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 4; ++i) specs.push_back(spec(0, 40, 40));
  ListWorkload w(specs);
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  const auto totals = engine.run();
  CHECK(totals.finished == 4);
  CHECK(totals.preemptions > 0);
  for (const auto& r : f.fleet) CHECK(r->kv.used_blocks() == 0);
  int tokens_of_0 = 0;
  for (const auto& [id, t] : rec.tokens) tokens_of_0 += id == 0;
  CHECK(tokens_of_0 == 40);  // exactly output_tokens, recomputes emit no duplicates
}

TEST_CASE("Round robin spreads requests over replicas", "[engine]") {
  Fixture f(1000, 3);
  ListWorkload w({spec(0, 10, 2), spec(0, 10, 2), spec(0, 10, 2), spec(0, 10, 2)});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  engine.run();
  std::vector<int> per(3, 0);
  for (const auto& d : rec.done) ++per[static_cast<std::size_t>(d.replica)];
  CHECK(per == std::vector<int>{2, 1, 1});
}

}  // namespace servesim

namespace servesim {

TEST_CASE("With prefix caching a request reuses its group's cached system prompt", "[engine]") {
  Fixture f;
  f.fleet[0]->kv.set_prefix_caching(true);
  // Same group, 100-token shared prefix (6 full blocks = 96 tokens), 300-token prompts.
  RequestSpec a = spec(0, 300, 2);
  RequestSpec b = spec(100, 300, 2);
  RequestSpec c = spec(200, 300, 2);
  a.prefix_group = b.prefix_group = 5;
  c.prefix_group = 6;
  a.prefix_tokens = b.prefix_tokens = c.prefix_tokens = 100;
  ListWorkload w({a, b, c});
  Recorder rec;
  Engine engine({f.fleet, f.router, w, f.cost, {&rec}});
  engine.run();
  REQUIRE(rec.steps.size() == 6);
  CHECK(rec.steps[0].prefill_tokens == 300);       // A computes everything
  CHECK(rec.steps[2].prefill_tokens == 300 - 96);  // B reuses 6 blocks
  CHECK(rec.steps[4].prefill_tokens == 300);       // C is another group
  // B's TTFT: 204 tokens × 10 µs.
  CHECK(rec.done[1].first_token_ns - rec.done[1].arrival_ns == 2'040'000);
  CHECK(f.fleet[0]->kv.prefix_hit_blocks() == 6);
  CHECK(f.fleet[0]->kv.prefix_query_blocks() == 18);
  CHECK(f.fleet[0]->kv.used_blocks() == 0);
}

}  // namespace servesim
