#include <map>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "schedulers/router/least_outstanding_router.hpp"
#include "schedulers/router/length_split_router.hpp"
#include "schedulers/router/power_aware_router.hpp"
#include "schedulers/router/random_router.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/config/input_error.hpp"

using namespace servesim;

namespace {

// A replica scheduler whose outstanding count the test sets.
class FakeScheduler : public ReplicaScheduler {
 public:
  std::string_view name() const override { return "fake"; }
  void enqueue(Request*, SimTime) override { ++outstanding_; }
  void next_batch(SimTime, KvCache&, Batch&) override {}
  void complete_batch(const Batch&, std::span<Request* const>, SimTime, KvCache&) override {}
  std::int64_t num_outstanding() const override { return outstanding_; }
  std::int64_t num_running() const override { return 0; }
  std::int64_t prefill_backlog_tokens() const override { return backlog_; }
  void decode_contexts(std::vector<std::int32_t>& decoding,
                       std::vector<std::int32_t>& later) const override {
    decoding.insert(decoding.end(), decoding_.begin(), decoding_.end());
    later.insert(later.end(), later_.begin(), later_.end());
  }
  std::int32_t token_budget() const override { return budget_; }
  std::int32_t seat_limit() const override { return seats_; }
  std::int64_t outstanding_ = 0;
  std::int64_t backlog_ = 0;
  std::vector<std::int32_t> decoding_, later_;
  std::int32_t budget_ = 0;
  std::int32_t seats_ = 0;
};

Fleet fleet_of(int n) {
  Fleet fleet;
  for (int i = 0; i < n; ++i) {
    fleet.push_back(std::make_unique<Replica>(i, ReplicaSpec{}, std::make_unique<FakeScheduler>(),
                                              KvCache(100, 16, 0.0), 4096));
  }
  return fleet;
}

void set_loads(Fleet& fleet, const std::vector<std::int64_t>& loads) {
  for (std::size_t i = 0; i < loads.size(); ++i) {
    static_cast<FakeScheduler&>(*fleet[i]->scheduler).outstanding_ = loads[i];
  }
}

std::vector<ReplicaId> route_n(Router& router, const Fleet& fleet,
                               const std::vector<ReplicaId>& eligible, int n) {
  std::vector<ReplicaId> out;
  Request r;
  for (int i = 0; i < n; ++i) out.push_back(router.route(r, fleet, eligible, 0));
  return out;
}

using Ids = std::vector<ReplicaId>;

}  // namespace

TEST_CASE("Round robin cycles over the replicas in id order", "[routers]") {
  const Fleet fleet = fleet_of(4);
  RoundRobinRouter rr;
  CHECK(rr.name() == "round_robin");
  CHECK(route_n(rr, fleet, {0, 1, 2, 3}, 9) == Ids{0, 1, 2, 3, 0, 1, 2, 3, 0});
}

TEST_CASE("Round robin skips replicas the request cannot fit and keeps its place", "[routers]") {
  const Fleet fleet = fleet_of(4);
  RoundRobinRouter rr;
  CHECK(route_n(rr, fleet, {0, 2}, 4) == Ids{0, 2, 0, 2});
  // Next in turn is 3: not eligible, so wrap around to 0.
  CHECK(route_n(rr, fleet, {0, 1}, 1) == Ids{0});
  // Next in turn is 1: not eligible, so 2; then 3 and 0 in turn.
  CHECK(route_n(rr, fleet, {2, 3}, 1) == Ids{2});
  CHECK(route_n(rr, fleet, {0, 1, 2, 3}, 1) == Ids{3});
  CHECK(route_n(rr, fleet, {1, 3}, 1) == Ids{1});
  CHECK(route_n(rr, fleet, {0, 1, 2, 3}, 2) == Ids{2, 3});
  CHECK(route_n(rr, fleet, {1}, 2) == Ids{1, 1});
}

TEST_CASE("Least outstanding picks the least loaded eligible replica, ties in turn", "[routers]") {
  Fleet fleet = fleet_of(4);
  LeastOutstandingRouter lo;
  CHECK(lo.name() == "least_outstanding");
  set_loads(fleet, {3, 1, 1, 2});
  CHECK(route_n(lo, fleet, {0, 1, 2, 3}, 1) == Ids{1});
  CHECK(route_n(lo, fleet, {0, 2, 3}, 1) == Ids{2});
  CHECK(route_n(lo, fleet, {0, 3}, 1) == Ids{3});
  set_loads(fleet, {0, 5, 4, 4});
  CHECK(route_n(lo, fleet, {1, 2, 3}, 1) == Ids{2});
  // Equal loads (a light load where every request finishes before the next): the tied replicas
  // take turns instead of the lowest id taking every request.
  set_loads(fleet, {7, 7, 7, 7});
  CHECK(route_n(lo, fleet, {0, 1, 2, 3}, 5) == Ids{3, 0, 1, 2, 3});
  CHECK(route_n(lo, fleet, {1, 2}, 3) == Ids{1, 2, 1});
}

TEST_CASE("Least outstanding spreads requests that it enqueues evenly", "[routers]") {
  Fleet fleet = fleet_of(3);
  LeastOutstandingRouter lo;
  Request r;
  Ids got;
  for (int i = 0; i < 7; ++i) {
    const ReplicaId id = lo.route(r, fleet, {0, 1, 2}, 0);
    fleet[static_cast<std::size_t>(id)]->scheduler->enqueue(&r, 0);
    got.push_back(id);
  }
  CHECK(got == Ids{0, 1, 2, 0, 1, 2, 0});
}

TEST_CASE("Random routing is deterministic for a seed, differs across seeds and is uniform",
          "[routers]") {
  const Fleet fleet = fleet_of(4);
  RandomRouter a(7), b(7), c(8);
  CHECK(a.name() == "random");
  const Ids first = route_n(a, fleet, {0, 1, 2, 3}, 1000);
  CHECK(first == route_n(b, fleet, {0, 1, 2, 3}, 1000));
  CHECK(first != route_n(c, fleet, {0, 1, 2, 3}, 1000));

  RandomRouter d(123);
  std::map<ReplicaId, int> counts;
  const int n = 40000;
  for (ReplicaId id : route_n(d, fleet, {0, 1, 2, 3}, n)) ++counts[id];
  REQUIRE(counts.size() == 4);
  // 10000 expected per replica, σ ≈ 87: a 4.6σ band.
  for (const auto& [id, k] : counts) {
    INFO("replica " << id);
    CHECK(k > 9600);
    CHECK(k < 10400);
  }

  std::map<ReplicaId, int> subset;
  for (ReplicaId id : route_n(d, fleet, {1, 3}, 2000)) ++subset[id];
  REQUIRE(subset.size() == 2);
  CHECK(subset.count(1) == 1);
  CHECK(subset.count(3) == 1);
  CHECK(subset[1] > 850);
  CHECK(subset[3] > 850);
}

namespace {

// A step costs 1000 ns, 10 ns per prefill token (20 on a capped replica), 100 ns per decode and
// a fifth of a nanosecond per decode context token.
class CountingCostModel : public CostModel {
 public:
  std::string_view name() const override { return "counting"; }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override {
    StepCost c;
    c.total_ns = 1000 + batch.prefill_tokens() * (replica.power_cap_w > 0 ? 20 : 10) +
                 100 * batch.num_decodes() + batch.decode_context_sum() / 5;
    return c;
  }
};

}  // namespace

TEST_CASE(
    "power_aware prices a request's whole stay: its prefill after the backlog, then its "
    "decodes beside every outstanding request",
    "[routers][power]") {
  Fleet fleet = fleet_of(2);
  fleet[0]->spec.power_cap_w = 300;
  for (auto& r : fleet) {
    auto& s = static_cast<FakeScheduler&>(*r->scheduler);
    s.budget_ = 100;
    s.seats_ = 4;
  }
  auto& loaded = static_cast<FakeScheduler&>(*fleet[1]->scheduler);
  loaded.backlog_ = 300;
  loaded.decoding_ = {1000, 2000, 3000};
  loaded.later_ = {500};
  fleet[1]->busy = true;
  fleet[1]->step_end = 5000;
  Request r;
  r.spec.prompt_tokens = 200;
  r.spec.output_tokens = 11;
  const CountingCostModel model;

  PowerAwareRouter aware(/*cap_blind=*/false);
  aware.attach(fleet, model);
  // Idle, capped: two 100-token chunks at 1000 + 2000 ns; then 10 decode steps of itself alone at
  // context 200 + 11 / 2 = 205: 1000 + 100 + 41 ns.
  CHECK(aware.estimate_ns(r, fleet, 0, 0) == 2 * 3000 + 10 * 1141);
  // Loaded: 5000 ns of the step in flight; 500 prefill tokens in chunks of 100 − 3 decodes,
  // 5 × 97 + 15, beside decodes at 6000 context tokens (1000 + 10 × 97 + 300 + 1200, and
  // 1000 + 150 + 300 + 1200); then 10 steps of 4 decodes: the 3 decoding, the waiting one cut
  // by the 4 seats, itself (1000 + 400 + 6205 / 5).
  CHECK(aware.estimate_ns(r, fleet, 1, 0) == 5000 + 5 * 3470 + 2650 + 10 * 2641);
  CHECK(aware.route(r, fleet, {0, 1}, 0) == 0);

  // Blind: the capped replica priced at its TDP.
  PowerAwareRouter blind(/*cap_blind=*/true);
  blind.attach(fleet, model);
  CHECK(blind.estimate_ns(r, fleet, 0, 0) == 2 * 2000 + 10 * 1141);
  CHECK(blind.estimate_ns(r, fleet, 1, 0) == aware.estimate_ns(r, fleet, 1, 0));

  // A prefill replica (disaggregated) is done with the request at its first token.
  fleet[0]->role = ReplicaRole::kPrefill;
  CHECK(aware.estimate_ns(r, fleet, 0, 0) == 2 * 3000);
  fleet[0]->role = ReplicaRole::kMixed;

  // Decodes alone separate two otherwise equal replicas (a prefill-only estimate ties them).
  fleet[0]->spec.power_cap_w = 0;
  loaded.backlog_ = 0;
  loaded.later_.clear();
  fleet[1]->busy = false;
  aware.attach(fleet, model);
  CHECK(aware.estimate_ns(r, fleet, 1, 0) > aware.estimate_ns(r, fleet, 0, 0));
  for (int i = 0; i < 3; ++i) CHECK(aware.route(r, fleet, {0, 1}, 0) == 0);
}

namespace {

// Two groups of two replicas, as the config's `replicas:` list would make them.
Fleet two_groups() {
  Fleet fleet = fleet_of(4);
  fleet[2]->group = 1;
  fleet[3]->group = 1;
  return fleet;
}

std::unique_ptr<LengthSplitRouter> length_split(const std::string& pools) {
  return std::make_unique<LengthSplitRouter>(LengthSplitRouter::parse(
      ConfigNode::parse("kind: length_split\npools: " + pools + "\n", "router.yaml")));
}

}  // namespace

TEST_CASE("Length split sends a prompt to its pool, least loaded within it", "[routers]") {
  Fleet fleet = two_groups();
  LengthSplitRouter r(LengthSplitRouter::parse(ConfigNode::parse(
      "kind: length_split\npools: [{name: short, groups: [0], max_prompt_tokens: 1024}, "
      "{name: long, groups: [1]}]\n",
      "router.yaml")));
  r.attach(fleet, CountingCostModel{});
  CHECK(r.pool_of(1) == 0);
  CHECK(r.pool_of(1024) == 0);
  CHECK(r.pool_of(1025) == 1);
  Request shortq, longq;
  shortq.spec.prompt_tokens = 1000;
  longq.spec.prompt_tokens = 3000;
  set_loads(fleet, {5, 2, 0, 9});
  // The long pool's replica 2 is idle, but a short prompt stays in its pool.
  CHECK(r.route(shortq, fleet, {0, 1, 2, 3}, 0) == 1);
  CHECK(r.route(longq, fleet, {0, 1, 2, 3}, 0) == 2);
  set_loads(fleet, {5, 2, 9, 0});
  CHECK(r.route(longq, fleet, {0, 1, 2, 3}, 0) == 3);
  // A long prompt that fits no replica of its pool goes to the other pool.
  CHECK(r.route(longq, fleet, {0, 1}, 0) == 1);
  // A short one that fits none of its own goes to the long pool.
  CHECK(r.route(shortq, fleet, {2, 3}, 0) == 3);
}

TEST_CASE("Length split pools are checked where they are written", "[routers]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(length_split("[{groups: [0]}]"),
                    Contains("router.yaml:2:8") && Contains("at least two pools"));
  CHECK_THROWS_WITH(length_split("[{groups: [0]}, {groups: [1]}]"),
                    Contains("router.yaml:2:9") && Contains("max_prompt_tokens"));
  CHECK_THROWS_WITH(
      length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: [1], max_prompt_tokens: 50}]"),
      Contains("the last pool takes every longer prompt"));
  CHECK_THROWS_WITH(length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: [0, 1]}]"),
                    Contains("replica group 0 is in two pools"));
  CHECK_THROWS_WITH(
      length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: [1], max_prompt_tokens: 100}, "
                   "{groups: [2]}]"),
      Contains("expected more than the previous pool's 100"));
  Fleet fleet = two_groups();
  auto missing = length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: [2]}]");
  CHECK_THROWS_WITH(missing->attach(fleet, CountingCostModel{}),
                    Contains("router.yaml:2:58") && Contains("no replica group 2"));
  CHECK_THROWS_WITH(length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: []}]"),
                    Contains("expected a non-empty list of replica group indexes"));
  auto one_pool_short = length_split("[{groups: [0], max_prompt_tokens: 100}, {groups: [2]}]");
  Fleet three = fleet_of(5);
  three[2]->group = 1;
  three[3]->group = 2;
  three[4]->group = 2;
  CHECK_THROWS_WITH(one_pool_short->attach(three, CountingCostModel{}),
                    Contains("replica group 1 is in no pool"));
}
