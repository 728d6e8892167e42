#include "schedulers/router/session_affinity_router.hpp"

#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "schedulers/registry.hpp"
#include "sim/config/input_error.hpp"
#include "tests/schedulers/load_only_scheduler.hpp"

using namespace servesim;
using Catch::Matchers::Contains;

namespace session_affinity_test {

struct Loads {
  Fleet fleet;
  explicit Loads(const std::vector<std::int64_t>& loads) {
    for (std::size_t i = 0; i < loads.size(); ++i) {
      fleet.push_back(std::make_unique<Replica>(static_cast<ReplicaId>(i), ReplicaSpec{},
                                                std::make_unique<test::LoadOnlyScheduler>(),
                                                KvCache(100, 16, 0.0), 4096));
      set(i, loads[i]);
    }
  }
  void set(std::size_t i, std::int64_t load) {
    static_cast<test::LoadOnlyScheduler&>(*fleet[i]->scheduler).outstanding_ = load;
  }
};

ReplicaId route(SessionAffinityRouter& router, const Fleet& fleet, std::int64_t session,
                const std::vector<ReplicaId>& eligible = {0, 1, 2, 3}) {
  Request r;
  r.spec.session = session;
  return router.route(r, fleet, eligible, 0);
}

}  // namespace session_affinity_test

using namespace session_affinity_test;

TEST_CASE(
    "session_affinity sends a session's first request to the least loaded replica and "
    "keeps it there",
    "[schedulers][routers][session_affinity]") {
  Loads f({3, 1, 2, 3});
  SessionAffinityRouter router({/*overload_factor=*/2.0});
  CHECK(route(router, f.fleet, 7) == 1);
  // Replica 1 is no longer the least loaded, but within 2 × the mean (mean 2.25, limit 4.5).
  f.set(1, 4);
  f.set(0, 0);
  CHECK(route(router, f.fleet, 7) == 1);
  CHECK(route(router, f.fleet, 8) == 0);  // a new session: the least loaded
  CHECK(router.sticky() == 1);
  CHECK(router.moved() == 0);
}

TEST_CASE("session_affinity moves a session off an overloaded replica or one it does not fit",
          "[schedulers][routers][session_affinity]") {
  Loads f({2, 2, 0, 2});
  SessionAffinityRouter router({/*overload_factor=*/1.5});
  CHECK(route(router, f.fleet, 1) == 2);  // scan: mean (2 + 2 + 0 + 2) / 4 = 1.5
  // Limit 1.5 × max(1.5, 1) = 2.25: 2 outstanding stays, 3 does not.
  f.set(2, 2);
  CHECK(route(router, f.fleet, 1) == 2);
  f.set(2, 3);
  f.set(3, 1);
  CHECK(route(router, f.fleet, 1) == 3);  // the least loaded, and the session's replica from now
  CHECK(router.moved() == 1);
  f.set(2, 0);
  CHECK(route(router, f.fleet, 1) == 3);
  // Its replica cannot hold this request: the least loaded eligible one takes it.
  CHECK(route(router, f.fleet, 1, {0, 1, 2}) == 2);
  CHECK(router.moved() == 2);
  // A request without a session goes to the least loaded.
  CHECK(route(router, f.fleet, -1) == 2);
}

TEST_CASE("session_affinity refuses a bad overload_factor", "[schedulers][routers][errors]") {
  const auto error = [](const std::string& yaml) -> std::string {
    try {
      make_router(ConfigNode::parse(yaml, "t.yaml"), 1);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(error("kind: session_affinity\noverload_factor: 0.5\n"),
             Contains("t.yaml:2:18") && Contains("expected a factor in [1, 1e6]"));
  CHECK_THAT(error("kind: session_affinity\noverload_factor: -1\n"), Contains("t.yaml:2:18"));
  CHECK_THAT(error("kind: session_affinity\nfactor: 2\n"), Contains("factor"));
}
