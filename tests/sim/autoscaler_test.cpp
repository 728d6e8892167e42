// The autoscaler in the engine with the `fixed` cost model: a load that rises and falls, and the
// states every replica went through.
#include "sim/engine/autoscaler.hpp"

#include <map>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output/metrics.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace {

using test::ListWorkload;

struct AutoscaleFixture {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  std::unique_ptr<Router> router;
  FixedCostModel cost{
      FixedCostModel::Params{10'000, 20'000'000, 0, 1}};  // 10 µs/token, 20 ms/decode

  AutoscaleFixture(int replicas, const std::string& router_yaml) {
    gpu.name = "fake";
    model.name = "fake";
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = 4;
    o.max_model_len = 4096;
    for (int i = 0; i < replicas; ++i) {
      ReplicaSpec spec;
      spec.gpu = &gpu;
      spec.model = &model;
      fleet.push_back(std::make_unique<Replica>(i, spec, std::make_unique<SarathiScheduler>(o),
                                                KvCache(1000, 16, 0.0), 4096));
    }
    router = make_router(ConfigNode::parse(router_yaml, "router.yaml"), 7);
  }
};

AutoscalingConfig autoscaling(int min_replicas = 1, int max_replicas = 4) {
  return AutoscalingConfig::parse(ConfigNode::parse(
      fmt::format("{{metric: queue_per_replica, target: 2, interval_s: 1, min_replicas: {}, "
                  "max_replicas: {}, scale_down_stabilization_s: 3, provisioning_delay_s: 5}}",
                  min_replicas, max_replicas),
      "autoscaling.yaml"));
}

// 2 req/s for 10 s, 20 req/s for 20 s, 2 req/s for 20 s: each request holds a seat ~1 s (50
// decode steps of 20 ms), so the burst needs about 5 replicas of 4 seats. Arrivals are off the
// 1 s evaluation grid, so no arrival shares an instant with a state change. Every fourth request
// repeats a prompt prefix (group 1) for the prefix-aware router.
std::vector<RequestSpec> rise_and_fall(double quiet_until = 50) {
  std::vector<RequestSpec> out;
  double t = 0.37;
  int i = 0;
  const auto add = [&](double qps, double until) {
    for (; t < until; t += 1.0 / qps, ++i) {
      out.push_back(
          RequestSpec{seconds_to_sim(t), 200, 50, i % 4 == 0 ? 1 : -1, i % 4 == 0 ? 128 : 0});
    }
  };
  add(2, 10);
  add(20, 30);
  add(2, quiet_until);
  return out;
}

// Each replica's state at `t` (after every transition at or before it).
std::map<ReplicaId, ReplicaState> states_at(const Autoscaler& a, SimTime t) {
  std::map<ReplicaId, ReplicaState> s;
  for (const ReplicaTransition& x : a.transitions()) {
    if (x.time <= t) s[x.replica] = x.to;
  }
  return s;
}

struct Placed : RunObserver {
  std::vector<std::pair<SimTime, ReplicaId>> requests;  // arrival, replica
  std::int64_t finished = 0;
  void on_request_done(const Request& r, bool rejected) override {
    if (!rejected) ++finished;
    requests.emplace_back(r.spec.arrival, r.replica);
  }
};

struct AutoscaledRun {
  AutoscaleFixture f;
  Autoscaler autoscaler;
  Placed placed;
  EngineTotals totals;
  AutoscaledRun(const AutoscalingConfig& c, const std::string& router_yaml, double quiet_until = 50)
      : f(c.max_replicas, router_yaml),
        autoscaler(c, c.provisioning_delay.value_or(0), f.fleet.size(), SloPolicy{}, 0) {
    ListWorkload w(rise_and_fall(quiet_until));
    Engine engine({.fleet = f.fleet,
                   .router = *f.router,
                   .workload = w,
                   .cost_model = f.cost,
                   .observers = {&autoscaler, &placed},
                   .autoscaler = &autoscaler});
    totals = engine.run();
  }
};

}  // namespace

TEST_CASE("Autoscaling follows a burst up to max_replicas and back down to min_replicas",
          "[autoscaler]") {
  const AutoscalingConfig c = autoscaling();
  AutoscaledRun run(c, "kind: least_outstanding");
  REQUIRE(run.totals.complete);
  int highest = 0;
  int lowest = c.max_replicas;
  for (const AutoscaleSample& s : run.autoscaler.samples()) {
    const int current = s.active + s.provisioning;
    CHECK(current >= c.min_replicas);
    CHECK(current <= c.max_replicas);
    CHECK(s.active >= 1);
    highest = std::max(highest, current);
    lowest = std::min(lowest, s.active);
  }
  CHECK(highest == c.max_replicas);  // the burst needs more than the fleet may have
  CHECK(lowest == c.min_replicas);   // the quiet start and end need one
  CHECK(run.autoscaler.scale_ups() > 0);
  CHECK(run.autoscaler.scale_downs() > 0);
}

TEST_CASE("Draining replicas finish every request they hold before they are released",
          "[autoscaler]") {
  AutoscaledRun run(autoscaling(), "kind: least_outstanding");
  CHECK(run.totals.rejected == 0);
  CHECK(run.placed.finished == run.totals.arrived);
  CHECK(run.totals.finished == static_cast<std::int64_t>(rise_and_fall().size()));
  // Some replica was drained with requests in it: its release came after its drain began, and
  // it finished requests after that instant.
  std::map<ReplicaId, SimTime> drain_began;
  bool drained_with_work = false;
  for (const ReplicaTransition& x : run.autoscaler.transitions()) {
    if (x.to == ReplicaState::kDraining) drain_began[x.replica] = x.time;
    if (x.to == ReplicaState::kOff && drain_began.count(x.replica) > 0 &&
        x.time > drain_began[x.replica]) {
      drained_with_work = true;
    }
  }
  CHECK(drained_with_work);
  for (const auto& r : run.f.fleet) CHECK(r->kv.used_blocks() == 0);
}

TEST_CASE("A provisioning replica takes no request before its delay ends", "[autoscaler]") {
  const AutoscalingConfig c = autoscaling();
  AutoscaledRun run(c, "kind: least_outstanding");
  std::map<ReplicaId, SimTime> provisioned_at;
  std::int64_t checked = 0;
  for (const ReplicaTransition& x : run.autoscaler.transitions()) {
    if (x.to == ReplicaState::kProvisioning) provisioned_at[x.replica] = x.time;
    if (x.to == ReplicaState::kActive && provisioned_at.count(x.replica) > 0) {
      CHECK(x.time == provisioned_at[x.replica] + *c.provisioning_delay);
      ++checked;
    }
  }
  CHECK(checked >= 3);  // replicas 1..3 were provisioned at least once
  for (const auto& [arrival, replica] : run.placed.requests) {
    INFO("request arriving at " << sim_to_s(arrival) << " s on replica " << replica);
    CHECK(states_at(run.autoscaler, arrival)[replica] == ReplicaState::kActive);
  }
}

TEST_CASE("A router with stale scraped state never routes to a draining or removed replica",
          "[autoscaler]") {
  // Scrapes every 10 s: its view of the fleet is up to 10 s old when replicas come and go (and
  // it piles the burst onto the replica it last saw idle, so the quiet tail is long).
  AutoscaledRun run(autoscaling(), "{kind: prefix_aware, scrape_interval_ms: 10000}", 150);
  REQUIRE(run.totals.complete);
  REQUIRE(run.autoscaler.scale_downs() > 0);
  std::int64_t on_later_replicas = 0;
  for (const auto& [arrival, replica] : run.placed.requests) {
    CHECK(states_at(run.autoscaler, arrival)[replica] == ReplicaState::kActive);
    if (replica > 0) ++on_later_replicas;
  }
  CHECK(on_later_replicas > 0);
}

TEST_CASE("The billed replica time of the samples sums to the total", "[autoscaler]") {
  AutoscaledRun run(autoscaling(), "kind: least_outstanding");
  SimTime sum = 0;
  std::int64_t tokens = 0;
  for (const AutoscaleSample& s : run.autoscaler.samples()) {
    sum += s.billed_ns;
    tokens += s.output_tokens;
  }
  CHECK(sum == run.autoscaler.billed_ns());
  CHECK(tokens == 50 * run.totals.finished);
  // The same integral from the transitions: billed while provisioning, active or draining.
  std::map<ReplicaId, std::pair<SimTime, bool>> since;  // last change, billed
  SimTime from_transitions = 0;
  for (const ReplicaTransition& x : run.autoscaler.transitions()) {
    auto& [t, billed] = since[x.replica];
    if (billed) from_transitions += x.time - t;
    t = x.time;
    billed = x.to != ReplicaState::kOff;
  }
  for (const auto& [id, s] : since) {
    if (s.second) from_transitions += run.totals.end_time - s.first;
  }
  CHECK(from_transitions == run.autoscaler.billed_ns());
  CHECK(run.autoscaler.samples().back().time == run.totals.end_time);
}

TEST_CASE("An autoscaler with min_replicas = max_replicas leaves a static fleet's results alone",
          "[autoscaler]") {
  const AutoscalingConfig c = autoscaling(3, 3);
  AutoscaleFixture plain(3, "kind: least_outstanding");
  MetricsCollector plain_metrics;
  ListWorkload w1(rise_and_fall());
  Engine e1({plain.fleet, *plain.router, w1, plain.cost, {&plain_metrics}});
  const EngineTotals t1 = e1.run();

  AutoscaleFixture scaled(3, "kind: least_outstanding");
  Autoscaler autoscaler(c, 0, 3, SloPolicy{}, 0);
  MetricsCollector scaled_metrics;
  ListWorkload w2(rise_and_fall());
  Engine e2({.fleet = scaled.fleet,
             .router = *scaled.router,
             .workload = w2,
             .cost_model = scaled.cost,
             .observers = {&scaled_metrics, &autoscaler},
             .autoscaler = &autoscaler});
  const EngineTotals t2 = e2.run();
  CHECK(t2.end_time == t1.end_time);
  CHECK(scaled_metrics.summary(t2, scaled.fleet, nullptr).dump() ==
        plain_metrics.summary(t1, plain.fleet, nullptr).dump());
  CHECK(autoscaler.billed_ns() == 3 * t1.end_time);
  CHECK(autoscaler.scale_ups() + autoscaler.scale_downs() == 0);
}

TEST_CASE("The SLO-miss metric scales a fleet that misses its SLO", "[autoscaler]") {
  const AutoscalingConfig c = AutoscalingConfig::parse(ConfigNode::parse(
      "{metric: slo_miss, target: 0.1, interval_s: 1, window_s: 3, min_replicas: 1, "
      "max_replicas: 4, provisioning_delay_s: 2}",
      "autoscaling.yaml"));
  AutoscaleFixture f(4, "kind: least_outstanding");
  SloSpec bounds;
  bounds.ttft_ms = 500;
  Autoscaler autoscaler(c, 2'000'000'000, 4, SloPolicy::single(bounds), 0);
  ListWorkload w(rise_and_fall());
  const SloPolicy slo = SloPolicy::single(bounds);
  Engine engine({.fleet = f.fleet,
                 .router = *f.router,
                 .workload = w,
                 .cost_model = f.cost,
                 .observers = {&autoscaler},
                 .slo = &slo,
                 .slo_overhead_ns = 0,
                 .slo_seed = 1,
                 .autoscaler = &autoscaler});
  engine.run();
  CHECK(autoscaler.scale_ups() > 0);
  CHECK(autoscaler.peak_billed() > 1);
}

}  // namespace servesim
