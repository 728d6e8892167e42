#include <map>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "schedulers/router/least_outstanding_router.hpp"
#include "schedulers/router/random_router.hpp"
#include "schedulers/router/round_robin_router.hpp"

using namespace servesim;

namespace {

// A replica scheduler whose outstanding count the test sets.
class FakeScheduler : public ReplicaScheduler {
 public:
  std::string_view name() const override { return "fake"; }
  void enqueue(Request*, SimTime) override { ++outstanding_; }
  void next_batch(SimTime, KvCache&, Batch&) override {}
  void complete_batch(const Batch&, SimTime, KvCache&, std::vector<Request*>&) override {}
  std::int64_t num_outstanding() const override { return outstanding_; }
  std::int64_t num_running() const override { return 0; }
  std::int64_t prefill_backlog_tokens() const override { return 0; }
  std::int32_t token_budget() const override { return 0; }
  std::int32_t seat_limit() const override { return 0; }
  std::int64_t outstanding_ = 0;
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
