// Deadline scheduling: SLO classes and deadlines (sim/engine/slo.hpp), the EDF replica scheduler,
// and the global queue router with its native and mechanism estimators and admission control, on
// the `fixed` cost model so that every time can be checked by hand.
#include <map>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/replica/edf_scheduler.hpp"
#include "schedulers/router/global_queue_router.hpp"
#include "sim/config/input_error.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/slo.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/output_writers.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace {

using Catch::Contains;

using test::ListWorkload;

struct Recorder : RunObserver {
  std::vector<RequestRecord> done;  // in completion order
  std::vector<StepRecord> steps;
  void on_step(const StepRecord& s, const BatchShape&, const StepCost&) override {
    steps.push_back(s);
  }
  void on_request_done(const Request& r, bool rejected) override {
    done.push_back(make_request_record(r, rejected));
  }
  const RequestRecord& of(RequestId id) const {
    for (const auto& r : done) {
      if (r.id == id) return r;
    }
    throw std::out_of_range("no record");
  }
};

RequestSpec spec(double arrival_ms, int prompt, int output, std::int32_t slo_class = -1) {
  RequestSpec s{ms_to_sim(arrival_ms), prompt, output, -1, 0};
  s.slo_class = slo_class;
  return s;
}

// A fleet of sarathi-family replicas priced at 10 µs per prefill token and 5 ms per decode step.
struct Fleet1 {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};

  explicit Fleet1(int replicas = 1, std::int32_t seats = 1, const std::string& kind = "sarathi") {
    gpu.name = "fake";
    model.name = "fake";
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = seats;
    o.max_model_len = 4096;
    for (int i = 0; i < replicas; ++i) {
      ReplicaSpec s;
      s.gpu = &gpu;
      s.model = &model;
      fleet.push_back(std::make_unique<Replica>(
          i, s, make_replica_scheduler(ConfigNode::parse("kind: " + kind, "test"), o),
          KvCache(1000, 16, 0.0), 4096));
    }
  }
  // The engine's parts for a run of `w` through `router` whose requests get `slo`'s classes
  // and deadlines (drawn with `seed`).
  EngineParts parts(Router& router, Workload& w, std::vector<RunObserver*> observers,
                    const SloPolicy& slo, std::uint64_t seed) {
    return {.fleet = fleet,
            .router = router,
            .workload = w,
            .cost_model = cost,
            .observers = std::move(observers),
            .slo = &slo,
            .slo_overhead_ns = 0,
            .slo_seed = seed};
  }
};

std::unique_ptr<Router> global_queue(const std::string& yaml) {
  return make_router(ConfigNode::parse("kind: global_queue\n" + yaml, "router.yaml"), 1);
}

Request make(RequestId id, SimTime deadline, double arrival_ms) {
  Request r;
  r.id = id;
  r.deadline = deadline;
  r.spec.arrival = ms_to_sim(arrival_ms);
  r.spec.prompt_tokens = 10;
  r.spec.output_tokens = 2;
  return r;
}

}  // namespace

TEST_CASE("SLO classes: deadlines per bound kind, less the request overhead", "[slo]") {
  const SloPolicy p = SloPolicy::parse(
      ConfigNode::parse("classes:\n"
                        "  - {name: interactive, ttft_ms: 1000, e2e_ms: 9000, fraction: 0.25}\n"
                        "  - {name: batch, e2e_ms: 8000, fraction: 0.25}\n"
                        "  - {name: smooth, tbt_ms: 50, prefix_groups: [3, 4]}\n"
                        "  - {name: rest, e2e_ms: 20000}\n",
                        "slo.yaml"));
  REQUIRE(p.named());
  REQUIRE(p.classes().size() == 4);
  const SimTime t = seconds_to_sim(2);
  const SimTime overhead = ms_to_sim(4);
  // A TTFT bound sets the deadline even beside an E2E bound; E2E alone sets it; TBT alone none.
  CHECK(p.deadline(0, t, overhead) == t + ms_to_sim(1000) - overhead);
  CHECK(p.deadline_is_ttft(0));
  CHECK(p.deadline(1, t, overhead) == t + ms_to_sim(8000) - overhead);
  CHECK_FALSE(p.deadline_is_ttft(1));
  CHECK(p.deadline(2, t, overhead) == kNoDeadline);
  CHECK(p.deadline(-1, t, overhead) == kNoDeadline);
  // Prefix groups pick their class; the others draw over the fractions, the rest last.
  RequestSpec grouped{0, 10, 2, 4, 5};
  CHECK(p.classify(grouped, 0.1) == 2);
  RequestSpec plain{0, 10, 2, -1, 0};
  CHECK(p.classify(plain, 0.1) == 0);
  CHECK(p.classify(plain, 0.3) == 1);
  CHECK(p.classify(plain, 0.6) == 3);
  // The draw is a pure function of seed and id, uniform enough for the fractions.
  std::map<std::int32_t, int> counts;
  for (RequestId id = 0; id < 20000; ++id) ++counts[p.classify(plain, SloPolicy::draw(9, id))];
  CHECK(counts[0] / 20000.0 == Approx(0.25).margin(0.015));
  CHECK(counts[1] / 20000.0 == Approx(0.25).margin(0.015));
  CHECK(counts[3] / 20000.0 == Approx(0.5).margin(0.015));
  CHECK(SloPolicy::draw(9, 17) == SloPolicy::draw(9, 17));
  CHECK(SloPolicy::draw(9, 17) != SloPolicy::draw(10, 17));
  // The single form is one unnamed class for every request.
  const SloPolicy one = SloPolicy::parse(ConfigNode::parse("{e2e_ms: 8000}", "slo.yaml"));
  CHECK_FALSE(one.named());
  CHECK(one.classify(plain, 0.99) == 0);
  CHECK(one.deadline(0, t, 0) == t + seconds_to_sim(8));
}

TEST_CASE("SLO classes that cannot be read are errors at their line", "[slo]") {
  const auto error = [](const std::string& yaml) {
    try {
      SloPolicy::parse(ConfigNode::parse(yaml, "slo.yaml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: 1, fraction: 0.7}\n  - {name: b, e2e_ms: 1, "
                   "fraction: 0.6}\n"),
             Contains("slo.yaml:3:") && Contains("the class fractions sum to 1.3 here"));
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: 1, fraction: 0.5}\n"),
             Contains("slo.yaml:2:") && Contains("sum to 0.5 (expected 1, or one class"));
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: 1}\n  - {name: b, ttft_ms: 1}\n"),
             Contains("slo.yaml:3:") && Contains("'a' and 'b' both have no fraction"));
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: 1}\n  - {name: a, ttft_ms: 1}\n"),
             Contains("slo.yaml:3:") && Contains("a second SLO class named 'a'"));
  CHECK_THAT(error("classes:\n  - {name: a, fraction: 1}\n"),
             Contains("slo.yaml:2:") && Contains("has no bound"));
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: -3}\n"),
             Contains("slo.yaml:2:") && Contains("e2e_ms"));
  CHECK_THAT(error("classes:\n  - {name: a, e2e_ms: 1, prefix_groups: [1]}\n  - {name: b, e2e_ms: "
                   "1, prefix_groups: [1]}\n  - {name: c, e2e_ms: 1}\n"),
             Contains("slo.yaml:3:") && Contains("prefix group 1 is already in class 'a'"));
  CHECK_THAT(error("{e2e_ms: 1, ttft: 2}"), Contains("ttft"));
}

TEST_CASE("EDF orders the waiting queue by deadline, then arrival, then id", "[edf]") {
  SchedulerOptions o;
  o.max_num_batched_tokens = 512;
  EdfScheduler edf(o);
  // Equal deadlines fall back to arrival, equal arrivals to id; no deadline sorts last.
  std::vector<Request> rs = {make(0, ms_to_sim(300), 0), make(1, ms_to_sim(100), 5),
                             make(2, ms_to_sim(100), 2), make(3, kNoDeadline, 0),
                             make(4, ms_to_sim(100), 2), make(5, ms_to_sim(200), 9),
                             make(6, kNoDeadline, -1)};
  for (auto& r : rs) edf.enqueue(&r, 0);
  std::vector<RequestId> order;
  for (const Request* r : edf.waiting()) order.push_back(r->id);
  CHECK(order == std::vector<RequestId>{2, 4, 1, 5, 0, 6, 3});
  // Admission takes them in that order: with two seats, the two most urgent run first.
  o.max_num_seqs = 2;
  EdfScheduler two(o);
  for (auto& r : rs) two.enqueue(&r, 0);
  KvCache kv(100, 16, 0.0);
  Batch batch;
  two.next_batch(ms_to_sim(10), kv, batch);
  REQUIRE(batch.entries.size() == 2);
  CHECK(batch.entries[0].request->id == 2);
  CHECK(batch.entries[1].request->id == 4);
}

TEST_CASE("EDF with preempt_for_deadline preempts the least urgent running request for KV",
          "[edf]") {
  SchedulerOptions o;
  o.max_num_batched_tokens = 512;
  o.max_num_seqs = 8;
  o.preempt_for_deadline = true;
  EdfScheduler edf(o);
  KvCache kv(8, 16, 0.0);  // 128 tokens
  Request late = make(0, ms_to_sim(900), 0);
  late.spec.prompt_tokens = 100;  // 7 blocks
  edf.enqueue(&late, 0);
  Batch batch;
  edf.next_batch(0, kv, batch);
  REQUIRE(batch.entries.size() == 1);
  late.computed = 100;  // the engine applies the prefill step: one output token
  late.generated = 1;
  late.step_tokens = 0;
  Request urgent = make(1, ms_to_sim(50), 1);
  urgent.spec.prompt_tokens = 60;  // 4 blocks: does not fit beside `late`
  edf.enqueue(&urgent, ms_to_sim(1));
  batch.clear();
  edf.next_batch(ms_to_sim(1), kv, batch);
  // `late` was preempted (recompute) and waits behind `urgent`, which runs.
  CHECK(late.preemptions == 1);
  CHECK(late.computed == 0);
  bool urgent_runs = false;
  for (const auto& e : batch.entries) urgent_runs = urgent_runs || e.request == &urgent;
  CHECK(urgent_runs);
  // Without the option the urgent request waits.
  o.preempt_for_deadline = false;
  EdfScheduler plain(o);
  KvCache kv2(8, 16, 0.0);
  Request late2 = make(0, ms_to_sim(900), 0);
  late2.spec.prompt_tokens = 100;
  plain.enqueue(&late2, 0);
  batch.clear();
  plain.next_batch(0, kv2, batch);
  late2.computed = 100;
  late2.generated = 1;
  late2.step_tokens = 0;
  Request urgent2 = make(1, ms_to_sim(50), 1);
  urgent2.spec.prompt_tokens = 60;
  plain.enqueue(&urgent2, ms_to_sim(1));
  batch.clear();
  plain.next_batch(ms_to_sim(1), kv2, batch);
  CHECK(late2.preemptions == 0);
  for (const auto& e : batch.entries) CHECK(e.request != &urgent2);
}

TEST_CASE("the global queue's estimators on a queue computable by hand", "[global_queue]") {
  // One replica with one seat: requests run one after another. A: prefill 100 tokens (1 ms),
  // first token at 1 ms, two decodes of 5 ms: done at 11 ms. B: admitted at 11 ms, done at 17 ms
  // (1 ms prefill + one 5 ms decode). C: admitted at 17 ms.
  for (const std::string estimator : {"mechanism", "native"}) {
    INFO(estimator);
    Fleet1 f;
    auto router = global_queue("estimator: " + estimator +
                               "\nnative: {output_tokens: 100, tokens_per_s: 700}\n");
    ListWorkload w({spec(0, 100, 3), spec(0, 100, 2), spec(0, 200, 1)});
    Recorder rec;
    MetricsCollector metrics;
    Engine engine({f.fleet, *router, w, f.cost, {&rec, &metrics}});
    const EngineTotals t = engine.run();
    CHECK(t.finished == 3);
    CHECK(rec.of(0).scheduling_delay_ns == 0);
    CHECK(rec.of(1).scheduling_delay_ns == ms_to_sim(11));
    CHECK(rec.of(2).scheduling_delay_ns == ms_to_sim(17));
    if (estimator == "mechanism") {
      CHECK(rec.of(0).est_wait_ns == 0);
      CHECK(rec.of(1).est_wait_ns == ms_to_sim(11));
      CHECK(rec.of(2).est_wait_ns == ms_to_sim(17));
      const auto s = metrics.summary(t, f.fleet);
      CHECK(s["wait_estimate"]["abs_error_ms"]["max"].get<double>() == 0.0);
    } else {
      // QLM: (requests ahead + 1) × 100 tokens ÷ 700 tokens/s.
      CHECK(rec.of(0).est_wait_ns == seconds_to_sim(100.0 / 700));
      CHECK(rec.of(1).est_wait_ns == seconds_to_sim(200.0 / 700));
      CHECK(rec.of(2).est_wait_ns == seconds_to_sim(300.0 / 700));
      const auto s = metrics.summary(t, f.fleet);
      CHECK(s["wait_estimate"]["requests"] == 3);
      // Errors 142.86, 274.71 and 411.57 ms.
      CHECK(s["wait_estimate"]["abs_error_ms"]["p50"].get<double>() ==
            Approx(200000.0 / 700 - 11).epsilon(0.01));
    }
  }
}

TEST_CASE("admission control rejects or demotes a predicted miss and counts it", "[global_queue]") {
  // The same queue with a 12 ms E2E SLO: A is estimated to finish at 11 ms (made), B at 17 ms
  // and C (once B is out of the way) at 13 ms: both predicted misses.
  const SloPolicy slo = SloPolicy::single(SloSpec{std::nullopt, std::nullopt, std::nullopt, 12.0});
  for (const std::string admission : {"reject", "demote"}) {
    INFO(admission);
    Fleet1 f;
    auto router = global_queue("estimator: mechanism\nadmission: " + admission + "\n");
    ListWorkload w({spec(0, 100, 3), spec(0, 100, 2), spec(0, 200, 1)});
    Recorder rec;
    MetricsCollector metrics(slo);
    Engine engine(f.parts(*router, w, {&rec, &metrics}, slo, 1));
    const EngineTotals t = engine.run();
    const auto s = metrics.summary(t, f.fleet);
    CHECK(t.arrived == t.finished + t.rejected);
    CHECK(rec.of(0).deadline_ns == ms_to_sim(12));
    CHECK(rec.of(0).rejected == 0);
    CHECK(rec.of(0).demoted == 0);
    CHECK(rec.of(0).finished_ns == ms_to_sim(11));
    if (admission == "reject") {
      CHECK(t.rejected == 2);
      CHECK(s["requests"]["rejected_by_admission"] == 2);
      for (RequestId id : {1, 2}) {
        CHECK(rec.of(id).rejected == 2);  // RejectReason::kAdmission
        CHECK(rec.of(id).replica == -1);
        CHECK(rec.of(id).first_scheduled_ns == -1);
      }
      CHECK(s["slo"]["met"] == 1);
      CHECK(s["slo"]["attainment"].get<double>() == Approx(1.0 / 3));
    } else {
      CHECK(t.rejected == 0);
      CHECK(s["requests"]["demoted"] == 2);
      CHECK(rec.of(1).demoted == 1);
      CHECK(rec.of(2).demoted == 1);
      // Demoted requests are served after the others, in arrival order: B at 11 ms, C at 17 ms.
      CHECK(rec.of(1).scheduling_delay_ns == ms_to_sim(11));
      CHECK(rec.of(2).scheduling_delay_ns == ms_to_sim(17));
    }
  }
}

TEST_CASE("demote serves a request whose deadline passed in the queue behind the others",
          "[global_queue]") {
  // Classes by trace: 0 has a 3 ms TTFT deadline, 1 none. A (class 1) takes the only seat for
  // 11 ms; B (class 0, due at 3 ms) is past its deadline when the seat frees, so under demote C
  // (class 0, arriving at 9 ms, due at 12 ms) runs first. Plain EDF runs B first and C misses.
  const SloPolicy slo = SloPolicy::parse(ConfigNode::parse(
      "classes:\n  - {name: fast, ttft_ms: 3, fraction: 0.5}\n  - {name: slow, e2e_ms: 1e6}\n",
      "slo.yaml"));
  std::map<std::string, std::vector<RequestId>> order;
  for (const std::string admission : {"keep", "demote"}) {
    Fleet1 f;
    // The estimator is native with a huge throughput: it predicts no miss at arrival.
    auto router = global_queue(
        "estimator: native\nnative: {tokens_per_s: 1e12}\nadmission: " + admission + "\n");
    ListWorkload w({spec(0, 100, 3, 1), spec(0.5, 100, 2, 0), spec(9, 50, 1, 0)});
    Recorder rec;
    MetricsCollector metrics(slo);
    Engine engine(f.parts(*router, w, {&rec, &metrics}, slo, 1));
    const EngineTotals t = engine.run();
    CHECK(t.finished == 3);
    std::vector<std::pair<SimTime, RequestId>> starts;
    for (const auto& r : rec.done) starts.emplace_back(r.first_scheduled_ns, r.id);
    std::sort(starts.begin(), starts.end());
    for (const auto& [when, id] : starts) order[admission].push_back(id);
    const auto s = metrics.summary(t, f.fleet);
    if (admission == "keep") {
      CHECK(s["slo"]["served_past_deadline"] == 2);  // B at 11 ms, C at 17 ms
      CHECK(s["slo"]["classes"][0]["met"] == 0);
    } else {
      CHECK(rec.of(1).demoted == 1);
      CHECK(s["slo"]["served_past_deadline"] == 1);  // B, at 11.5 ms
      CHECK(s["slo"]["classes"][0]["met"] == 1);     // C: first token at 11.5 ms, TTFT 2.5 ms
      CHECK(s["slo"]["classes"][0]["demoted"] == 1);
    }
  }
  CHECK(order["keep"] == std::vector<RequestId>{0, 1, 2});
  CHECK(order["demote"] == std::vector<RequestId>{0, 2, 1});
}

TEST_CASE("every arrival finishes or is counted, whatever the admission policy", "[global_queue]") {
  std::mt19937_64 rng(5);
  std::vector<RequestSpec> specs;
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    t += std::uniform_real_distribution<double>(0, 4)(rng);
    specs.push_back(spec(t, std::uniform_int_distribution<int>(1, 700)(rng),
                         std::uniform_int_distribution<int>(1, 40)(rng)));
  }
  const SloPolicy slo = SloPolicy::parse(ConfigNode::parse(
      "classes:\n  - {name: i, ttft_ms: 40, fraction: 0.4}\n  - {name: b, e2e_ms: 300}\n",
      "slo.yaml"));
  for (const std::string router_yaml :
       {"estimator: mechanism\nadmission: reject\n", "estimator: mechanism\nadmission: demote\n",
        "estimator: native\nnative: {tokens_per_s: 3000}\nadmission: reject\n",
        "order: fcfs\nestimator: mechanism\nsustained_load: true\nadmission: demote\n"}) {
    INFO(router_yaml);
    Fleet1 f(3, 4, "edf");
    auto router = global_queue(router_yaml);
    ListWorkload w(specs);
    Recorder rec;
    MetricsCollector metrics(slo);
    Engine engine(f.parts(*router, w, {&rec, &metrics}, slo, 3));
    const EngineTotals totals = engine.run();  // throws on a stall or a leaked KV block
    CHECK(totals.arrived == 300);
    CHECK(totals.arrived == totals.finished + totals.rejected);
    CHECK(rec.done.size() == 300);
    const auto s = metrics.summary(totals, f.fleet);
    std::int64_t per_class = 0;
    for (const auto& c : s["slo"]["classes"]) per_class += c["requests"].get<std::int64_t>();
    CHECK(per_class == 300);
    CHECK(s["requests"]["rejected_by_admission"] == totals.rejected);
  }
}

TEST_CASE("the global queue is deterministic under equal-time events", "[global_queue]") {
  // Six requests at one instant on two one-seat replicas: the two earliest deadlines start at 0,
  // on replicas 0 and 1; two runs give identical records.
  const auto run = [] {
    Fleet1 f(2, 1);
    auto router = global_queue("estimator: mechanism\n");
    std::vector<RequestSpec> specs;
    for (int i = 0; i < 6; ++i) specs.push_back(spec(0, 50 + 10 * i, 2, i % 2));
    const SloPolicy slo = SloPolicy::parse(ConfigNode::parse(
        "classes:\n  - {name: a, e2e_ms: 100, fraction: 0.5}\n  - {name: b, ttft_ms: 5}\n",
        "slo.yaml"));
    ListWorkload w(specs);
    Recorder rec;
    Engine engine(f.parts(*router, w, {&rec}, slo, 1));
    engine.run();
    return rec.done;
  };
  const auto a = run();
  const auto b = run();
  REQUIRE(a.size() == 6);
  REQUIRE(b.size() == 6);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].replica == b[i].replica);
    CHECK(a[i].first_scheduled_ns == b[i].first_scheduled_ns);
    CHECK(a[i].est_wait_ns == b[i].est_wait_ns);
  }
  std::map<RequestId, RequestRecord> by_id;
  for (const auto& r : a) by_id[r.id] = r;
  // Class b (odd ids) is due at 5 ms, class a at 100 ms: ids 1 and 3 start first, 1 on replica 0.
  CHECK(by_id[1].first_scheduled_ns == 0);
  CHECK(by_id[1].replica == 0);
  CHECK(by_id[3].first_scheduled_ns == 0);
  CHECK(by_id[3].replica == 1);
  CHECK(by_id[0].first_scheduled_ns > 0);
}

TEST_CASE("router settings that cannot work are errors at their key", "[global_queue]") {
  const auto error = [](const std::string& yaml) {
    try {
      global_queue(yaml);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error("admission: reject\n"),
             Contains("router.yaml:2:") && Contains("expected estimator native or mechanism"));
  CHECK_THAT(error("estimator: native\n"), Contains("needs the model's token throughput"));
  CHECK_THAT(error("estimator: guess\n"), Contains("unknown estimator 'guess' (known: none, "
                                                   "native, mechanism)"));
  CHECK_THAT(error("order: lifo\n"), Contains("unknown order 'lifo'"));
  CHECK_THAT(error("estimator: native\nnative: {tokens_per_s: 700}\nsustained_load: true\n"),
             Contains("sustained_load is the mechanism estimator's"));
  CHECK_THAT(error("estimater: native\n"), Contains("estimater"));
}

}  // namespace servesim
