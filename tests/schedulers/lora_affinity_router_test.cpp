// The LoRA-affinity router: it keeps an adapter's requests on the replica it sent them to while
// that replica has seats, spills to the least loaded one when it fills, and routes base-model
// requests by load.
#include "schedulers/router/lora_affinity_router.hpp"

#include <memory>

#include <catch2/catch.hpp>

#include "schedulers/registry.hpp"
#include "sim/config/input_error.hpp"
#include "tests/schedulers/load_only_scheduler.hpp"

using namespace servesim;

namespace {

Fleet lora_fleet_of(int n) {
  Fleet fleet;
  for (int i = 0; i < n; ++i) {
    fleet.push_back(std::make_unique<Replica>(i, ReplicaSpec{},
                                              std::make_unique<test::LoadOnlyScheduler>(512, 4),
                                              KvCache(100, 16, 0.0), 4096));
  }
  return fleet;
}

ReplicaId place_adapter(Router& router, Fleet& fleet, std::int32_t adapter,
                        const std::vector<ReplicaId>& eligible = {0, 1, 2}) {
  Request r;
  r.spec.adapter = adapter;
  const ReplicaId id = router.route(r, fleet, eligible, 0);
  fleet[static_cast<std::size_t>(id)]->scheduler->enqueue(&r, 0);
  return id;
}

}  // namespace

TEST_CASE("lora_affinity keeps an adapter on its replica until that replica's seats fill",
          "[lora][routers]") {
  Fleet fleet = lora_fleet_of(3);
  LoraAffinityRouter router;
  const ReplicaId first = place_adapter(router, fleet, 5);
  // Three more requests of adapter 5 follow it although other replicas are idle.
  for (int i = 0; i < 3; ++i) CHECK(place_adapter(router, fleet, 5) == first);
  CHECK(router.affinity_hits() == 3);
  // The holder is full (4 seats): the next one goes by load, to a replica with none.
  const ReplicaId spill = place_adapter(router, fleet, 5);
  CHECK(spill != first);
  CHECK(fleet[static_cast<std::size_t>(spill)]->scheduler->num_outstanding() == 1);
  // Now adapter 5 has two holders; the next goes to the less loaded one.
  CHECK(place_adapter(router, fleet, 5) == spill);
  // Another adapter goes by load (the replica with no requests), as does the base model.
  const ReplicaId other = place_adapter(router, fleet, 9);
  CHECK(other != first);
  CHECK(other != spill);
  CHECK(router.affinity_misses() == 3);
  // A holder that is not eligible is passed over.
  CHECK(place_adapter(router, fleet, 9, {0, 1, 2}) == other);
  const std::vector<ReplicaId> without =
      other == 0 ? std::vector<ReplicaId>{1, 2} : std::vector<ReplicaId>{0};
  CHECK(place_adapter(router, fleet, 9, without) != other);
}

TEST_CASE("lora_affinity's max_outstanding and max_holders bound the affinity", "[lora][routers]") {
  Fleet fleet = lora_fleet_of(3);
  LoraAffinityRouter router(LoraAffinityRouter::Options{2, 1});
  const ReplicaId first = place_adapter(router, fleet, 1);
  CHECK(place_adapter(router, fleet, 1) == first);
  const ReplicaId second = place_adapter(router, fleet, 1);  // first holds 2 = max_outstanding
  CHECK(second != first);
  // One holder remembered: the most recent (second); first is forgotten though it has room.
  CHECK(place_adapter(router, fleet, 1) == second);
  CHECK_THROWS_AS(
      LoraAffinityRouter::parse(ConfigNode::parse("kind: lora_affinity\nmax_holders: 0", "t.yaml")),
      InputError);
  CHECK_THROWS_AS(LoraAffinityRouter::parse(
                      ConfigNode::parse("kind: lora_affinity\nmax_outstanding: -1", "t.yaml")),
                  InputError);
}
