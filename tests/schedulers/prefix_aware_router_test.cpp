#include "schedulers/router/prefix_aware_router.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "schedulers/registry.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "sim/engine/kv_cache.hpp"
#include "tests/schedulers/load_only_scheduler.hpp"

using namespace servesim;

namespace prefix_router_test {

Fleet fleet_of(int n) {
  Fleet fleet;
  for (int i = 0; i < n; ++i) {
    KvCache kv(1000, 16, 0.0);
    kv.set_prefix_caching(true);
    fleet.push_back(std::make_unique<Replica>(
        i, ReplicaSpec{}, std::make_unique<test::LoadOnlyScheduler>(), std::move(kv), 1 << 20));
  }
  return fleet;
}

void set_load(Fleet& fleet, ReplicaId id, std::int64_t outstanding) {
  static_cast<test::LoadOnlyScheduler&>(*fleet[static_cast<std::size_t>(id)]->scheduler)
      .outstanding_ = outstanding;
}

// A request whose prompt is `blocks` 512-token hash blocks with the given chain values.
Request hashed_request(const std::vector<std::int64_t>& chain) {
  auto h = std::make_shared<PrefixHashes>();
  for (const std::int64_t v : chain) h->chain.push_back(v + (std::int64_t{1} << 62));
  Request r;
  r.spec.prompt_tokens = static_cast<std::int32_t>(chain.size()) * 512;
  r.spec.output_tokens = 10;
  r.spec.prefix_tokens = r.spec.prompt_tokens;
  r.spec.hashes = std::move(h);
  return r;
}

// Replica `id` computes and keeps the whole prompt of `r` in its prefix cache (then frees it, so
// the blocks stay cached but free and its KV use is back to 0).
void cache_on(Fleet& fleet, ReplicaId id, const Request& r) {
  KvCache& kv = fleet[static_cast<std::size_t>(id)]->kv;
  const BlockKeys keys = BlockKeys::hashed(r.spec.hashes, r.spec.prefix_tokens, kv.block_size(),
                                           BlockKeys::own_id(r.id));
  std::int64_t held = 0, shared = 0;
  REQUIRE(kv.grow(held, r.spec.prompt_tokens));
  kv.publish_prefix(keys, held, held, shared);
  kv.release(held, shared, keys);
}

const std::vector<ReplicaId> kAll{0, 1, 2, 3};

PrefixAwareRouter::Options options(const std::string& yaml) {
  return PrefixAwareRouter::parse(ConfigNode::parse("kind: prefix_aware\n" + yaml, "router.yaml"));
}

TEST_CASE("prefix_aware sends a request to the replica holding its prefix when loads are equal",
          "[routers][prefix]") {
  Fleet fleet = fleet_of(4);
  const Request warm = hashed_request({1, 2, 3, 4});
  cache_on(fleet, 2, warm);
  PrefixAwareRouter router;
  Request same = hashed_request({1, 2, 3, 4});
  CHECK(router.prefix_share(same, fleet, 2) == Approx(1.0));  // all 127 cacheable blocks
  CHECK(router.prefix_share(same, fleet, 1) == 0);
  for (const ReplicaId id : kAll) set_load(fleet, id, 3);
  CHECK(router.route(same, fleet, kAll, 0) == 2);
  // A request sharing the first half goes there too; one with another first block does not
  // (ties among the others are taken in turn, starting at replica 0).
  Request half = hashed_request({1, 2, 7, 8});
  CHECK(router.prefix_share(half, fleet, 2) == Approx(1024.0 / 2032));
  CHECK(router.route(half, fleet, kAll, 0) == 2);
  Request other = hashed_request({9, 2, 3, 4});
  CHECK(router.prefix_share(other, fleet, 2) == 0);
  CHECK(router.route(other, fleet, kAll, 0) != 2);
  // Replica 2 is not eligible: the request goes elsewhere.
  CHECK(router.route(same, fleet, {0, 1, 3}, 0) != 2);
}

TEST_CASE("prefix_aware routes away from an overloaded replica holding the prefix",
          "[routers][prefix]") {
  Fleet fleet = fleet_of(4);
  const Request warm = hashed_request({1, 2, 3, 4});
  cache_on(fleet, 2, warm);
  PrefixAwareRouter router(options("overload_outstanding: 4"));
  Request r = hashed_request({1, 2, 3, 4});
  // 4 more than the least: not overloaded yet; the prefix outweighs the queue.
  set_load(fleet, 2, 4);
  CHECK(router.route(r, fleet, kAll, 0) == 2);
  // 5 more: overloaded; its prefix no longer counts and the least loaded replicas win.
  set_load(fleet, 2, 5);
  CHECK(router.route(r, fleet, kAll, 0) != 2);
}

TEST_CASE("with a scrape interval prefix_aware decides on the state of its last scrape",
          "[routers][prefix]") {
  Fleet fleet = fleet_of(4);
  PrefixAwareRouter router(options("scrape_interval_ms: 100"));
  Request r = hashed_request({1, 2, 3, 4});
  // Scrape at t = 0: replica 1 has the least load, nobody has the prefix.
  for (const ReplicaId id : kAll) set_load(fleet, id, id == 1 ? 0 : 2);
  CHECK(router.route(r, fleet, kAll, 0) == 1);
  CHECK(router.scrapes() == 1);
  // Replica 3 caches the prefix and replica 1 fills up, but the router has not looked yet.
  cache_on(fleet, 3, r);
  set_load(fleet, 1, 9);
  CHECK(router.route(r, fleet, kAll, ms_to_sim(99)) == 1);
  CHECK(router.prefix_share(r, fleet, 3) == 0);
  CHECK(router.scrapes() == 1);
  // The scrape at 100 ms sees both.
  CHECK(router.route(r, fleet, kAll, ms_to_sim(100)) == 3);
  CHECK(router.scrapes() == 2);
  CHECK(router.prefix_share(r, fleet, 3) == Approx(1.0));  // whole hash blocks when scraped
  // The live router sees the change at once.
  PrefixAwareRouter live;
  CHECK(live.route(r, fleet, kAll, ms_to_sim(99)) == 3);
}

TEST_CASE("prefix_aware routes the same way twice", "[routers][prefix]") {
  auto run = [] {
    Fleet fleet = fleet_of(4);
    PrefixAwareRouter router;
    std::vector<ReplicaId> out;
    for (int i = 0; i < 40; ++i) {
      Request r = hashed_request({i % 5, i % 3, i});
      const ReplicaId id = router.route(r, fleet, kAll, 0);
      out.push_back(id);
      set_load(fleet, id, fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding() + 1);
      cache_on(fleet, id, r);
    }
    return out;
  };
  const auto a = run();
  CHECK(a == run());
  // Requests repeating a first block find the replica that cached it: not all on one replica,
  // and more than one replica used.
  CHECK(std::count(a.begin(), a.end(), a.front()) < 40);
}

TEST_CASE("bad prefix_aware keys are errors at their file:line:col", "[routers][prefix]") {
  auto error = [](const std::string& yaml) -> std::string {
    try {
      make_router(ConfigNode::parse("kind: prefix_aware\n" + yaml, "router.yaml"), 1);
    } catch (const InputError& e) {
      return e.what();
    }
    FAIL("no InputError for " << yaml);
    return "";
  };
  CHECK_THAT(error("prefix_weigth: 2"),
             Catch::Contains("router.yaml:2:1") && Catch::Contains("prefix_weigth"));
  CHECK_THAT(error("queue_weight: -1"), Catch::Contains("router.yaml:2:15"));
  CHECK_THAT(error("scrape_interval_ms: abc"), Catch::Contains("router.yaml:2:21"));
  CHECK_THAT(error("overload_outstanding: 0"), Catch::Contains("router.yaml:2:23"));
  CHECK_THAT(error("prefix_weight: 0\nqueue_weight: 0\nkv_weight: 0"),
             Catch::Contains("router.yaml:1:1") && Catch::Contains("all 0"));
  const auto o = options("prefix_weight: 1.5\nscrape_interval_ms: 50");
  CHECK(o.prefix_weight == 1.5);
  CHECK(o.queue_weight == 2.0);
  CHECK(o.scrape_interval == ms_to_sim(50));
}

}  // namespace prefix_router_test
