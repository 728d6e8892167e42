// The routers that keep an index of replica loads choose exactly what a scan of every replica
// chooses: each is run in an engine in lockstep with a twin that never gets the engine's updates
// (so it scans), on a fleet where some requests fit only some replicas, and with autoscaling.
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/router/least_outstanding_router.hpp"
#include "schedulers/router/lora_affinity_router.hpp"
#include "schedulers/router/outstanding_index.hpp"
#include "schedulers/router/prefix_aware_router.hpp"
#include "schedulers/router/session_affinity_router.hpp"
#include "sim/engine/autoscaler.hpp"
#include "sim/engine/engine.hpp"
#include "tests/schedulers/load_only_scheduler.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace indexed_router_test {

// Routes with `indexed` (which gets the engine's updates) and checks that `scanned` (which does
// not) makes the same choice every time.
class Lockstep : public Router {
 public:
  Lockstep(std::unique_ptr<Router> indexed, std::unique_ptr<Router> scanned)
      : indexed_(std::move(indexed)), scanned_(std::move(scanned)) {}
  std::string_view name() const override { return indexed_->name(); }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override {
    const ReplicaId a = indexed_->route(request, fleet, eligible, now);
    const ReplicaId b = scanned_->route(request, fleet, eligible, now);
    ++routed;
    if (a != b) ++differ;
    return a;
  }
  void on_routable(const Fleet& fleet, const std::vector<ReplicaId>& routable) override {
    indexed_->on_routable(fleet, routable);
  }
  void on_replica_update(const Replica& replica) override { indexed_->on_replica_update(replica); }
  Router& indexed() { return *indexed_; }

  std::int64_t routed = 0;
  std::int64_t differ = 0;

 private:
  std::unique_ptr<Router> indexed_;
  std::unique_ptr<Router> scanned_;
};

std::int64_t indexed_routes(Router& r) {
  if (auto* x = dynamic_cast<LeastOutstandingRouter*>(&r)) return x->indexed_routes();
  if (auto* x = dynamic_cast<SessionAffinityRouter*>(&r)) return x->indexed_routes();
  if (auto* x = dynamic_cast<LoraAffinityRouter*>(&r)) return x->indexed_routes();
  return -1;
}

struct IndexFleet {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  FixedCostModel cost{FixedCostModel::Params{10'000, 20'000'000, 0, 1}};

  // Replica i holds 400 + 200·i blocks of 16 tokens: a long prompt fits only the larger ones.
  explicit IndexFleet(int replicas, bool prefix_caching = false) {
    gpu.name = "fake";
    model.name = "fake";
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = 8;
    o.max_model_len = 16384;
    o.enable_prefix_caching = prefix_caching;
    for (int i = 0; i < replicas; ++i) {
      ReplicaSpec spec;
      spec.gpu = &gpu;
      spec.model = &model;
      KvCache kv(400 + 200 * i, 16, 0.0);
      kv.set_prefix_caching(prefix_caching);
      fleet.push_back(std::make_unique<Replica>(i, spec, std::make_unique<SarathiScheduler>(o),
                                                std::move(kv), 16384));
    }
  }
};

// Bursts and lulls, a few sessions and adapters, and one request in 16 too long for the
// smallest replicas.
std::vector<RequestSpec> requests(int n) {
  std::vector<RequestSpec> out;
  SimTime t = 0;
  for (int i = 0; i < n; ++i) {
    t += (i / 200) % 2 == 0 ? 7'000'000 : 60'000'000;
    RequestSpec s;
    s.arrival = t;
    s.prompt_tokens = i % 16 == 5 ? 9000 : 100 + (i * 37) % 700;
    s.output_tokens = 5 + (i * 13) % 90;
    s.session = i % 3 == 0 ? -1 : i % 40;
    s.adapter = i % 5 == 0 ? -1 : i % 7;
    out.push_back(s);
  }
  return out;
}

// Conversations on a shared system prompt (hash level 0 everywhere), each turn extending its
// conversation's chain of 64-token hash blocks; every fifth request is of a prefix group instead,
// and one in 16 is too long for the smallest replicas.
std::vector<RequestSpec> prefix_requests(int n) {
  std::vector<RequestSpec> out;
  std::vector<std::vector<std::int64_t>> chains(30);
  SimTime t = 0;
  for (int i = 0; i < n; ++i) {
    t += (i / 150) % 2 == 0 ? 4'000'000 : 40'000'000;
    RequestSpec s;
    s.arrival = t;
    s.output_tokens = 3 + (i * 13) % 40;
    if (i % 5 == 0) {
      s.prompt_tokens = 300 + (i * 7) % 200;
      s.prefix_group = i % 3;
      s.prefix_tokens = 256;
    } else {
      std::vector<std::int64_t>& chain = chains[static_cast<std::size_t>(i * 7 % 30)];
      const auto conv = static_cast<std::int64_t>(i * 7 % 30);
      if (chain.empty() || chain.size() > 40) chain.assign(1, std::int64_t{1} << 62);
      const std::size_t grow = 1 + static_cast<std::size_t>(i % 4);
      for (std::size_t k = 0; k < grow; ++k) {
        chain.push_back((std::int64_t{1} << 62) + conv * 1000 +
                        static_cast<std::int64_t>(chain.size()));
      }
      auto h = std::make_shared<PrefixHashes>();
      h->block_tokens = 64;
      h->chain = chain;
      s.prompt_tokens = static_cast<std::int32_t>(chain.size()) * 64 + (i % 16 == 5 ? 9000 : 20);
      s.prefix_tokens = static_cast<std::int32_t>(chain.size()) * 64;
      s.hashes = std::move(h);
    }
    out.push_back(s);
  }
  return out;
}

std::unique_ptr<Router> make(const std::string& kind) {
  return make_router(ConfigNode::parse(fmt::format("{{kind: {}}}", kind), "router.yaml"), 11);
}

}  // namespace indexed_router_test

using namespace indexed_router_test;

TEST_CASE("Routers with an index of loads choose as a scan of every replica does",
          "[schedulers][routers][index]") {
  const std::string kind = GENERATE("least_outstanding", "session_affinity", "lora_affinity");
  IndexFleet f(12);
  Lockstep router(make(kind), make(kind));
  test::ListWorkload w(requests(3000));
  Engine engine({f.fleet, router, w, f.cost, {}});
  const EngineTotals totals = engine.run();
  INFO(kind);
  CHECK(totals.finished == 3000);
  CHECK(router.routed == 3000);
  CHECK(router.differ == 0);
  // Every request that fits every replica was routed from the index (by load: the sticky
  // routers send most of theirs by session or adapter); the 188 long ones by a scan.
  const std::int64_t indexed = indexed_routes(router.indexed());
  if (kind == "least_outstanding") {
    CHECK(indexed == 3000 - 188);
  } else {
    CHECK(indexed > 500);
    CHECK(indexed < 3000 - 188);
  }
}

TEST_CASE("The prefix-aware router's index chooses as its scan of every replica does",
          "[schedulers][routers][index][prefix_aware]") {
  PrefixAwareRouter::Options o;
  const int variant = GENERATE(range(0, 6));
  o.exact_holders = variant % 3 == 0 ? 64 : (variant % 3 == 1 ? 2 : 0);
  if (variant >= 3) o.scrape_interval = 50'000'000;
  if (variant == 4) o.kv_weight = 0;
  if (variant == 5) {
    o.queue_weight = 0;
    o.overload_outstanding = 2;
  }
  IndexFleet f(12, /*prefix_caching=*/true);
  Lockstep router(std::make_unique<PrefixAwareRouter>(o), std::make_unique<PrefixAwareRouter>(o));
  test::ListWorkload w(prefix_requests(3000));
  Engine engine({f.fleet, router, w, f.cost, {}});
  const EngineTotals totals = engine.run();
  INFO("variant " << variant);
  CHECK(totals.finished == 3000);
  CHECK(router.differ == 0);
  const auto& indexed = static_cast<const PrefixAwareRouter&>(router.indexed());
  CHECK(indexed.indexed_routes() > 2000);
}

TEST_CASE("An indexed router follows the active replicas under autoscaling",
          "[schedulers][routers][index][autoscaler]") {
  IndexFleet f(6);
  Lockstep router(make("least_outstanding"), make("least_outstanding"));
  const AutoscalingConfig c = AutoscalingConfig::parse(ConfigNode::parse(
      "{metric: queue_per_replica, target: 2, interval_s: 1, min_replicas: 1, max_replicas: 6, "
      "scale_down_stabilization_s: 3, provisioning_delay_s: 2}",
      "autoscaling.yaml"));
  Autoscaler autoscaler(c, c.provisioning_delay.value_or(0), f.fleet.size(), SloPolicy{}, 0);
  std::vector<RequestSpec> specs = requests(2000);
  for (RequestSpec& s : specs) s.prompt_tokens = std::min(s.prompt_tokens, 2000);
  test::ListWorkload w(specs);
  Engine engine({.fleet = f.fleet,
                 .router = router,
                 .workload = w,
                 .cost_model = f.cost,
                 .observers = {&autoscaler},
                 .autoscaler = &autoscaler});
  const EngineTotals totals = engine.run();
  CHECK(totals.finished == 2000);
  CHECK(autoscaler.scale_ups() > 0);
  CHECK(router.differ == 0);
  CHECK(indexed_routes(router.indexed()) == 2000);
}

TEST_CASE("The index of loads takes the least loaded replica and ties in turn",
          "[schedulers][routers][index]") {
  Fleet fleet;
  for (int i = 0; i < 5; ++i) {
    fleet.push_back(std::make_unique<Replica>(i, ReplicaSpec{},
                                              std::make_unique<test::LoadOnlyScheduler>(),
                                              KvCache(100, 16, 0.0), 4096));
  }
  const auto set = [&](int i, std::int64_t load) {
    static_cast<test::LoadOnlyScheduler&>(*fleet[static_cast<std::size_t>(i)]->scheduler)
        .outstanding_ = load;
  };
  for (int i = 0; i < 5; ++i) set(i, 3 - i % 2);  // loads 3 2 3 2 3
  OutstandingIndex index;
  index.rebuild(fleet, {0, 1, 2, 3});  // replica 4 is not routable
  CHECK(index.size() == 4);
  CHECK(index.total() == 10);
  CHECK(index.least() == 2);
  CHECK(index.most() == 3);
  CHECK(index.least_in_turn(0) == 1);
  CHECK(index.least_in_turn(2) == 3);
  CHECK(index.least_in_turn(4) == 1);  // wraps to the lowest tied id
  set(2, 0);
  set(4, 0);
  index.update(*fleet[2]);
  index.update(*fleet[4]);  // not a member: ignored
  CHECK(index.least() == 0);
  CHECK(index.total() == 7);
  CHECK(index.least_in_turn(3) == 2);
  CHECK(index.covers({0, 1, 2, 3}));
  CHECK_FALSE(index.covers({0, 1, 2}));
}

}  // namespace servesim
