// Prefill/decode disaggregation: the link network and the engine's hand-off, on timelines small
// enough to check by hand (the `fixed` cost model, links of 1 B/ns).
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/router/least_prefill_router.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/engine.hpp"
#include "sim/hardware/link_network.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/output_writers.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace pd_test {

using test::ListWorkload;

struct Recorder : RunObserver {
  std::vector<RequestRecord> done;
  std::vector<TransferRecord> transfers;
  std::vector<std::pair<RequestId, SimTime>> tokens;
  void on_tokens(std::span<const TokenEvent> events, SimTime now) override {
    for (const TokenEvent& t : events) tokens.emplace_back(t.request->id, now);
  }
  void on_request_done(const Request& r, bool rejected) override {
    done.push_back(make_request_record(r, rejected));
  }
  void on_transfer(const TransferRecord& t) override { transfers.push_back(t); }
};

// GPUs with NVLink of 2 GB/s bidirectional (1 B/ns each way) and no PCIe, a model whose KV is
// 512 B per token (2 layers × 1 KV head × 64 dims × K and V × 2 B); cluster links at full
// efficiency with 2 µs of latency (1 µs per edge).
struct Fixture {
  GpuSpec gpu;
  ModelSpec model;
  Fleet fleet;
  ClusterSpec cluster;
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};  // 10 µs/token, 5 ms/decode

  // One replica per entry of `roles`, each with `blocks` KV blocks of 16 tokens (decode replicas
  // get `decode_blocks` when it is > 0).
  explicit Fixture(const std::vector<ReplicaRole>& roles, std::int64_t blocks = 1000,
                   std::int64_t decode_blocks = 0) {
    gpu.name = "fake";
    gpu.nvlink_gb_per_s = 2;
    model.name = "fake";
    model.num_layers = 2;
    model.num_kv_heads = 1;
    model.head_dim = 64;
    cluster.nvlink_efficiency = 1;
    cluster.nvlink_latency_us = 2;
    cluster.nic_gb_per_s = 0.5;
    cluster.nic_latency_us = 10;
    SchedulerOptions o;
    o.max_num_batched_tokens = 512;
    o.max_num_seqs = 8;
    o.max_model_len = 4096;
    for (std::size_t i = 0; i < roles.size(); ++i) {
      ReplicaSpec spec;
      spec.gpu = &gpu;
      spec.model = &model;
      spec.topology = "nvlink";
      const std::int64_t b =
          roles[i] == ReplicaRole::kDecode && decode_blocks > 0 ? decode_blocks : blocks;
      fleet.push_back(std::make_unique<Replica>(static_cast<ReplicaId>(i), spec,
                                                std::make_unique<SarathiScheduler>(o),
                                                KvCache(b, 16, 0.0), 4096));
      fleet.back()->role = roles[i];
    }
  }
};

// Runs `requests` through the fixture's fleet: prefill router least_prefill_tokens, decode
// router round robin, observed by a Recorder and a MetricsCollector.
struct PdRun {
  Recorder rec;
  MetricsCollector metrics;
  EngineTotals totals;
  nlohmann::json summary;
  PdRun(Fixture& f, std::vector<RequestSpec> requests) {
    ListWorkload w(std::move(requests));
    LeastPrefillRouter router;
    RoundRobinRouter decode_router;
    Engine engine({.fleet = f.fleet,
                   .router = router,
                   .workload = w,
                   .cost_model = f.cost,
                   .observers = {&rec, &metrics},
                   .decode_router = &decode_router,
                   .cluster = &f.cluster});
    totals = engine.run();
    summary = metrics.summary(totals, f.fleet, engine.network());
  }
};

RequestSpec spec(double arrival_ms, int prompt, int output) {
  return RequestSpec{ms_to_sim(arrival_ms), prompt, output, -1, 0};
}

constexpr auto P = ReplicaRole::kPrefill;
constexpr auto D = ReplicaRole::kDecode;

TEST_CASE("Replicas are placed on nodes in fleet order, none straddling two", "[pd]") {
  Fixture f({P, D, D});
  f.fleet[1]->spec.tp = 4;
  f.fleet[2]->spec.tp = 4;
  const auto p = place_replicas(f.fleet, 8);
  // 1 GPU, then 4 (GPUs 1–4), then 4 more do not fit the 3 left: node 1 from GPU 8.
  CHECK(p[0].first_gpu == 0);
  CHECK(p[1].first_gpu == 1);
  CHECK(p[1].node == 0);
  CHECK(p[2].first_gpu == 8);
  CHECK(p[2].node == 1);
  CHECK(p[2].gpus == 4);
}

TEST_CASE("A lone transfer takes the path latency plus bytes over the slowest link", "[pd]") {
  Fixture f({P, D});
  LinkNetwork net(f.fleet, f.cluster);
  std::vector<std::int64_t> done;
  net.start(0, 0, 1, 3000, 0);
  // NVLink through the node's NVSwitch: 2 µs, then 3000 B at 1 B/ns.
  CHECK(net.next_change() == 2000);
  net.advance(2000, done);
  CHECK(net.next_change() == 5000);
  net.advance(5000, done);
  REQUIRE(done == std::vector<std::int64_t>{0});
  CHECK(net.idle());
  CHECK(net.solo_time_ns(0, 1, 3000) == 5000);
}

TEST_CASE("Two transfers into one GPU share its link, re-shared as they start and end", "[pd]") {
  Fixture f({P, P, D});
  LinkNetwork net(f.fleet, f.cluster);
  std::vector<std::int64_t> done;
  // A: 3000 B from t = 0, moving from 2 µs. B: 3000 B from t = 1 µs, moving from 3 µs. Both
  // cross nvswitch → gpu2 (1 B/ns). A alone moves 1000 B by 3 µs; then each gets 0.5 B/ns:
  // A's last 2000 B end at 7 µs, when B has 1000 B left, alone at 1 B/ns: 8 µs.
  net.start(7, 0, 2, 3000, 0);
  net.advance(1000, done);
  net.start(9, 1, 2, 3000, 1000);
  while (!net.idle()) {
    const SimTime t = net.next_change();
    const std::size_t before = done.size();
    net.advance(t, done);
    if (done.size() > before) {
      CHECK(t == (done.back() == 7 ? 7000 : 8000));
    }
  }
  CHECK(done == std::vector<std::int64_t>{7, 9});
  // Every byte crossed the shared link, and each source link carried its own transfer.
  for (const auto& l : net.link_stats()) {
    if (l.name == "nvswitch0>gpu2") CHECK(l.bytes == Approx(6000));
    if (l.name == "gpu0>nvswitch0") CHECK(l.bytes == Approx(3000));
  }
}

TEST_CASE("A transfer that ends the instant another starts is still reported", "[pd]") {
  // A ends at 5 µs (as alone above). B starts at 5 µs before any advance to that instant (a
  // hand-off at the end of a step, ahead of the network's own event): A's end is kept, the next
  // change is that instant, and the next advance reports it.
  Fixture f({P, P, D});
  LinkNetwork net(f.fleet, f.cluster);
  std::vector<std::int64_t> done;
  net.start(3, 0, 2, 3000, 0);
  net.advance(2000, done);
  net.start(4, 1, 2, 3000, 5000);
  CHECK_FALSE(net.idle());
  CHECK(net.next_change() == 5000);
  net.advance(5000, done);
  CHECK(done == std::vector<std::int64_t>{3});
  while (!net.idle()) net.advance(net.next_change(), done);
  CHECK(done == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("Transfers on disjoint links do not slow each other, and between nodes use NICs",
          "[pd]") {
  Fixture f({P, P, D, D});
  LinkNetwork net(f.fleet, f.cluster);
  std::vector<std::int64_t> done;
  net.start(0, 0, 2, 3000, 0);
  net.start(1, 1, 3, 3000, 0);
  net.advance(net.next_change(), done);  // both start moving at 2 µs
  net.advance(net.next_change(), done);
  CHECK(done.size() == 2);  // both end at 5 µs, as alone
  // Two nodes of one GPU each: the path is gpu → NIC → gpu, 10 µs, 0.5 B/ns.
  LinkNetwork apart([&] {
    Fleet two;
    for (int i = 0; i < 2; ++i) {
      two.push_back(std::make_unique<Replica>(i, f.fleet[0]->spec, nullptr, KvCache(1, 16, 0), 1));
    }
    return LinkNetwork(two, [&] {
      ClusterSpec c = f.cluster;
      c.gpus_per_node = 1;
      return c;
    }());
  }());
  CHECK(apart.solo_time_ns(0, 1, 3000) == 10'000 + 6000);
}

TEST_CASE("One request through prefill, KV transfer and decode, by hand", "[pd]") {
  Fixture f({P, D});
  const PdRun run(f, {spec(0, 100, 3)});
  const Recorder& rec = run.rec;
  const auto& totals = run.totals;
  // Prefill 100 × 10 µs → first token at 1 ms on replica 0. KV of 100 tokens × 512 B = 51,200 B:
  // 2 µs + 51.2 µs → on replica 1 at 1.0532 ms. Decodes of 5 ms: 6.0532 and 11.0532 ms.
  REQUIRE(rec.done.size() == 1);
  CHECK(rec.done[0].first_token_ns == ms_to_sim(1));
  REQUIRE(rec.transfers.size() == 1);
  CHECK(rec.transfers[0].from_replica == 0);
  CHECK(rec.transfers[0].to_replica == 1);
  CHECK(rec.transfers[0].start_ns == 1'000'000);
  CHECK(rec.transfers[0].end_ns == 1'053'200);
  CHECK(rec.transfers[0].bytes == 51'200);
  CHECK(rec.tokens == std::vector<std::pair<RequestId, SimTime>>{
                          {0, 1'000'000}, {0, 6'053'200}, {0, 11'053'200}});
  CHECK(rec.done[0].finished_ns == 11'053'200);
  CHECK(rec.done[0].replica == 1);
  // The first decoded token's gap holds the transfer: a TBT sample of 5.0532 ms.
  CHECK(run.metrics.tbt_ms().max() == Approx(5.0532));
  CHECK(totals.transfers == 1);
  CHECK(totals.transfer_bytes == 51'200);
  const auto& s = run.summary;
  CHECK(s["disaggregation"]["transfer_ms"]["max"].get<double>() == Approx(0.0532));
  CHECK(s["disaggregation"]["kv_tokens"] == 100);
  CHECK(s["replicas"][0]["role"] == "prefill");
  // Every KV block is free at the end on both sides (the engine checks it too).
  CHECK(f.fleet[0]->kv.used_blocks() == 0);
  CHECK(f.fleet[1]->kv.used_blocks() == 0);
}

TEST_CASE("A one-token request finishes on the prefill replica without a transfer", "[pd]") {
  Fixture f({P, D});
  const PdRun run(f, {spec(0, 100, 1)});
  const Recorder& rec = run.rec;
  const auto& totals = run.totals;
  REQUIRE(rec.done.size() == 1);
  CHECK(rec.done[0].replica == 0);
  CHECK(rec.done[0].finished_ns == ms_to_sim(1));
  CHECK(totals.transfers == 0);
}

TEST_CASE("Full decode KV holds a hand-off back until a decode finishes, nothing lost", "[pd]") {
  // Decode KV of 10 blocks (160 tokens): one request of 100 + 50 (peak 149 tokens) at a time.
  Fixture f({P, D}, 1000, 10);
  const PdRun run(f, {spec(0, 100, 50), spec(0, 100, 50)});
  const Recorder& rec = run.rec;
  const auto& totals = run.totals;
  // Both prefill in one 2 ms step. Request 0 moves (7 blocks of 10); request 1 needs 7 with 3
  // free: it waits, its KV still on the prefill replica, until request 0 finishes.
  CHECK(totals.handoff_waits == 1);
  CHECK(totals.finished == 2);
  REQUIRE(rec.transfers.size() == 2);
  REQUIRE(rec.done.size() == 2);
  CHECK(rec.transfers[0].start_ns == ms_to_sim(2));
  CHECK(rec.transfers[1].queued_ns == ms_to_sim(2));
  CHECK(rec.transfers[1].start_ns == rec.done[0].finished_ns);
  // Request 0: on the decode replica at 2.0532 ms, 49 decodes of 5 ms.
  CHECK(rec.done[0].finished_ns == 2'053'200 + 49 * 5'000'000);
  CHECK(totals.transfer_bytes == 2 * 51'200);
  CHECK(totals.arrived == totals.finished + totals.rejected);
}

TEST_CASE("A request no decode replica can hold is rejected at arrival, counted", "[pd]") {
  Fixture f({P, D}, 1000, 4);  // decode KV: 64 tokens
  const PdRun run(f, {spec(0, 100, 50), spec(0, 30, 5)});
  const Recorder& rec = run.rec;
  const auto& totals = run.totals;
  CHECK(totals.rejected == 1);
  CHECK(totals.finished == 1);
  REQUIRE(rec.done.size() == 2);
  CHECK(rec.done[0].rejected == static_cast<int>(RejectReason::kFitsNoReplica));
}

}  // namespace pd_test
}  // namespace servesim
