// Speculative decoding in the engine: the `fixed` cost model gives hand-checkable timelines, the
// acceptance draws are seeded, and the KV of rejected drafts is freed.
#include "sim/engine/speculation.hpp"

#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/replica/vllm_scheduler.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/config/input_error.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output/metrics.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace {

using test::ListWorkload;

SpeculativeConfig parse_spec(const std::string& yaml) {
  return SpeculativeConfig::parse(ConfigNode::parse(yaml, "spec.yaml"));
}

// What each step emitted, per request (tokens of each chunk, in order).
struct Chunks : RunObserver {
  std::vector<std::vector<std::int32_t>> by_request;
  std::vector<SimTime> times;
  void on_tokens(std::span<const TokenEvent> events, SimTime now) override {
    for (const TokenEvent& t : events) {
      const auto id = static_cast<std::size_t>(t.request->id);
      if (by_request.size() <= id) by_request.resize(id + 1);
      by_request[id].push_back(t.tokens);
      if (id == 0) times.push_back(now);
    }
  }
};

// One replica (sarathi, or vllm), 10 µs per prefill token, 5 ms per decode step, a model of 10
// layers (so one MTP head layer costs a tenth of a decode step), speculating `k` tokens.
struct Fixture {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  RoundRobinRouter router;
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};

  Fixture(std::int32_t k, bool vllm = false, std::int64_t blocks = 1000) {
    gpu.name = "fake";
    model.name = "fake";
    model.num_layers = 10;
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = 8;
    o.max_model_len = 4096;
    o.num_speculative_tokens = k;
    ReplicaSpec spec;
    spec.gpu = &gpu;
    spec.model = &model;
    std::unique_ptr<ReplicaScheduler> s;
    if (vllm) {
      s = std::make_unique<VllmScheduler>(o);
    } else {
      s = std::make_unique<SarathiScheduler>(o);
    }
    fleet.push_back(
        std::make_unique<Replica>(0, spec, std::move(s), KvCache(blocks, 16, 0.0), 4096));
  }
  // The engine's parts for a run of `w` whose drafts `s` resolves, told to `chunks`.
  EngineParts parts(Workload& w, Chunks& chunks, const Speculation& s) {
    return {.fleet = fleet,
            .router = router,
            .workload = w,
            .cost_model = cost,
            .observers = {&chunks},
            .speculation = &s};
  }
};

RequestSpec at(double ms, int prompt, int output) {
  return RequestSpec{ms_to_sim(ms), prompt, output, -1, 0};
}

// Speculation with the draft model `draft` (named "draft" here), k = 2, every draft accepted.
Speculation drafting_with(ModelSpec& draft) {
  draft.name = "draft";
  return Speculation(parse_spec("{method: draft, draft_model: draft, num_speculative_tokens: 2, "
                                "acceptance_rate: 1}"),
                     &draft, 1);
}

std::vector<RequestSpec> mix() {
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 24; ++i) specs.push_back(at(3.0 * i, 40 + 37 * (i % 5), 5 + 13 * (i % 4)));
  return specs;
}

}  // namespace

TEST_CASE("With acceptance rate 1 each decode step emits k + 1 tokens until the output cap",
          "[speculation]") {
  Fixture f(3);
  const Speculation s(parse_spec("{method: mtp, num_speculative_tokens: 3, acceptance_rate: 1}"),
                      nullptr, 7);
  ListWorkload w({at(0, 100, 10)});
  Chunks chunks;
  Engine engine(f.parts(w, chunks, s));
  const EngineTotals t = engine.run();
  // The prefill's token, then 4 + 4 (9 of 10), then a plain decode: one token left, no drafts.
  REQUIRE(chunks.by_request.size() == 1);
  CHECK(chunks.by_request[0] == std::vector<std::int32_t>{1, 4, 4, 1});
  // Prefill 1 ms plus the head's pass over the prompt, a tenth of it: 1.1 ms; a verify: 4
  // tokens × 10 µs + 3 head passes of a tenth of a 5 ms decode each = 1.54 ms; the last decode
  // 5 ms.
  CHECK(chunks.times ==
        std::vector<SimTime>{ms_to_sim(1.1), ms_to_sim(2.64), ms_to_sim(4.18), ms_to_sim(9.18)});
  CHECK(t.spec_steps == 2);
  CHECK(t.spec_drafted == 6);
  CHECK(t.spec_accepted == 6);
  CHECK(f.fleet[0]->kv.used_blocks() == 0);
}

TEST_CASE("With acceptance rate 0 every verify emits one token and frees its drafts' KV",
          "[speculation]") {
  for (const bool vllm : {false, true}) {
    Fixture f(4, vllm);
    const Speculation s(
        parse_spec("{method: eagle, num_speculative_tokens: 4, acceptance_rate: 0}"), nullptr, 7);
    ListWorkload w(mix());
    Chunks chunks;
    Engine engine(f.parts(w, chunks, s));
    const EngineTotals t = engine.run();
    CHECK(t.finished == 24);
    CHECK(t.spec_accepted == 0);
    CHECK(t.spec_drafted > 0);
    for (const auto& r : chunks.by_request) {
      for (const std::int32_t n : r) CHECK(n == 1);
    }
    // Every block back: drafts written past the accepted tokens were rewound each step.
    CHECK(f.fleet[0]->kv.used_blocks() == 0);
  }
}

TEST_CASE("Acceptance draws are seeded: the same seed gives the same run, another seed another",
          "[speculation]") {
  const auto run = [](std::uint64_t seed) {
    Fixture f(5, false, 60);  // few blocks: speculation under KV pressure and preemption
    const Speculation s(parse_spec("{method: mtp, num_speculative_tokens: 5, acceptance_rates: "
                                   "[0.9, 0.7, 0.5, 0.3, 0.1]}"),
                        nullptr, seed);
    ListWorkload w(mix());
    Chunks chunks;
    Engine engine(f.parts(w, chunks, s));
    const EngineTotals t = engine.run();
    CHECK(t.finished == 24);
    CHECK(f.fleet[0]->kv.used_blocks() == 0);
    return std::make_pair(chunks.by_request, t.spec_accepted);
  };
  const auto a = run(11);
  CHECK(a == run(11));
  CHECK(a.first != run(12).first);
  // Output lengths hold whatever was accepted.
  for (std::size_t i = 0; i < a.first.size(); ++i) {
    const auto& c = a.first[i];
    CHECK(std::accumulate(c.begin(), c.end(), 0) == mix()[i].output_tokens);
  }
}

TEST_CASE("Per-position rates give each position its accepted share", "[speculation]") {
  const Speculation s(
      parse_spec("{method: mtp, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.5, 0.2]}"),
      nullptr, 3);
  std::vector<int> at_least(4, 0);
  constexpr int kDraws = 20000;
  Request r;
  for (int i = 0; i < kDraws; ++i) {
    r.id = i;
    const std::int32_t a = s.accepted(r, 3);
    for (int j = 0; j <= a; ++j) ++at_least[static_cast<std::size_t>(j)];
  }
  CHECK(at_least[1] / double{kDraws} == Approx(0.8).margin(0.015));
  CHECK(at_least[2] / double{kDraws} == Approx(0.5).margin(0.015));
  CHECK(at_least[3] / double{kDraws} == Approx(0.2).margin(0.015));
  CHECK(s.config().expected_accepted(3) == Approx(1.5));
  // A single rate α: position j is accepted with α^j.
  CHECK(parse_spec("{method: mtp, num_speculative_tokens: 3, acceptance_rate: 0.5}").acceptance ==
        std::vector<double>{0.5, 0.25, 0.125});
}

TEST_CASE("A draft model's passes are priced with the draft model, the verify as a chunk",
          "[speculation]") {
  Fixture f(2);
  ModelSpec draft;
  const Speculation s = drafting_with(draft);
  BatchShape shape;
  shape.prefills.push_back(PrefillChunk{3, 100});
  const std::vector<DraftSlot> drafts{{100, 2}};
  const StepCost c = s.step(f.cost, shape, drafts, {}, f.fleet[0]->spec);
  // The verify: 3 tokens × 10 µs; two draft decodes of 5 ms (the fixed model ignores the model).
  CHECK(c.total_ns == 30'000 + 2 * 5'000'000);
}

TEST_CASE("The drafter reads a step's real prefill chunks: a draft model in full, heads by layers",
          "[speculation]") {
  Fixture f(2);
  ModelSpec draft;
  const Speculation by_model = drafting_with(draft);
  const Speculation by_heads(
      parse_spec("{method: mtp, num_speculative_tokens: 2, acceptance_rate: 1}"), nullptr, 1);
  BatchShape shape;
  shape.prefills.push_back(PrefillChunk{100, 0});  // a real prefill of 100 tokens
  shape.prefills.push_back(PrefillChunk{3, 200});  // a verify of two drafts
  const std::vector<DraftSlot> drafts{{200, 2}};
  const std::vector<PrefillChunk> prompts{{100, 0}};
  const StepCost target = f.cost.step(shape, f.fleet[0]->spec);
  const StepCost without = by_model.step(f.cost, shape, drafts, {}, f.fleet[0]->spec);
  const StepCost with = by_model.step(f.cost, shape, drafts, prompts, f.fleet[0]->spec);
  // The target's 103 tokens, two draft decodes, and the draft model's pass over the 100-token
  // prompt chunk (the fixed model prices every model alike).
  CHECK(target.total_ns == 103 * 10'000);
  CHECK(without.total_ns == target.total_ns + 2 * 5'000'000);
  CHECK(with.total_ns == without.total_ns + 100 * 10'000);
  // One MTP head layer of the 10: a tenth of each drafter pass.
  const StepCost heads = by_heads.step(f.cost, shape, drafts, prompts, f.fleet[0]->spec);
  CHECK(heads.total_ns == target.total_ns + 2 * 500'000 + 100 * 1'000);
}

TEST_CASE("KvCache::shrink frees trailing blocks beyond the tokens kept", "[speculation]") {
  KvCache kv(10, 16, 0.0);
  std::int64_t held = 0;
  REQUIRE(kv.grow(held, 40));  // 3 blocks
  kv.shrink(held, 17);         // 2 blocks
  CHECK(held == 2);
  CHECK(kv.used_blocks() == 2);
  kv.shrink(held, 32);  // nothing to free
  CHECK(held == 2);
  kv.release(held);
  CHECK(kv.used_blocks() == 0);
}

TEST_CASE("Bad speculative keys are errors at their line and column", "[speculation]") {
  const auto message = [](const std::string& yaml) -> std::string {
    try {
      parse_spec(yaml);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  using Catch::Contains;
  CHECK_THAT(
      message("method: mtp\nnum_speculative_tokens: 0\nacceptance_rate: 0.5\n"),
      Contains("spec.yaml:2:25: num_speculative_tokens: expected an integer from 1 to 64, got 0"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: -2\nacceptance_rate: 0.5\n"),
             Contains("spec.yaml:2:25:"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\nacceptance_rate: 1.5\n"),
             Contains("spec.yaml:3:18:"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\nacceptance_rate: -0.1\n"),
             Contains("spec.yaml:3:18:"));
  CHECK_THAT(
      message("method: mtp\nnum_speculative_tokens: 3\nacceptance_rates: [0.5, 0.2]\n"),
      Contains("spec.yaml:3:19: acceptance_rates: expected 3 rates (num_speculative_tokens), "
               "got 2"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\nacceptance_rates: [0.5, 1.2]\n"),
             Contains("spec.yaml:3:25: acceptance_rates[1]: expected a rate in [0, 1], got 1.2"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\nacceptance_rates: [0.5, 0.6]\n"),
             Contains("spec.yaml:3:25: acceptance_rates[1]: expected rates that do not increase"));
  CHECK_THAT(message("method: medusa\nnum_speculative_tokens: 2\nacceptance_rate: 0.5\n"),
             Contains("spec.yaml:1:9: method: unknown speculative method 'medusa' (known: "
                      "draft, eagle, mtp)"));
  CHECK_THAT(message("method: draft\nnum_speculative_tokens: 2\nacceptance_rate: 0.5\n"),
             Contains("missing key 'draft_model'"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\n"),
             Contains("expected exactly one of acceptance_rate"));
  CHECK_THAT(message("method: mtp\nnum_speculative_tokens: 2\nacceptance_rate: 0.5\nk: 3\n"),
             Contains("spec.yaml:4:1: unknown key 'k'"));
}

}  // namespace servesim
