// Multi-LoRA serving in the engine: the LoraCache's slots, LRU eviction and load times, and runs
// of every scheduler kind in which no step holds more adapters than slots.
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/lora_cache.hpp"
#include "tests/sim/list_workload.hpp"

namespace servesim {
namespace {

// 2 slots, 3 host entries; adapter bytes 4e6 per GPU and 8e6 whole; PCIe 4 GB/s, disk 2 GB/s:
// a load from the host takes 1 ms, one from disk 4 ms + 1 ms.
LoraCache small_lora_cache() {
  LoraCache::Options o;
  o.max_loras = 2;
  o.max_cpu_loras = 3;
  o.pcie_gb_per_s = 4;
  o.disk_gb_per_s = 2;
  return LoraCache(o, {4e6}, {8e6});
}

}  // namespace

TEST_CASE("The LoRA cache pins slots, evicts the least recently used free one, and prices loads",
          "[lora]") {
  LoraCache c = small_lora_cache();
  CHECK(c.acquire(0) == 5'000'000);  // disk then PCIe
  CHECK(c.acquire(1) == 5'000'000);
  CHECK(c.acquire(0) == 0);  // on the GPU already
  CHECK(c.gpu_adapters() == 2);
  CHECK_FALSE(c.can_acquire(2));  // both slots pinned
  CHECK(c.can_acquire(1));
  c.release(1);
  CHECK(c.can_acquire(2));
  CHECK(c.acquire(2) == 5'000'000);  // evicts 1, the only unpinned one
  CHECK_FALSE(c.on_gpu(1));
  CHECK(c.on_gpu(0));
  c.release(0);
  c.release(0);
  CHECK(c.acquire(1) == 1'000'000);  // evicts 0; 1 is still in host memory
  c.release(1);
  // A fourth adapter pushes the least recently used one not on the GPU (0) out of the host.
  CHECK(c.acquire(3) == 5'000'000);
  c.release(2);
  c.release(3);
  CHECK(c.acquire(0) == 5'000'000);  // read from disk again
  const LoraCache::Stats& s = c.stats();
  CHECK(s.loads_from_disk == 5);
  CHECK(s.loads_from_cpu == 1);
  CHECK(s.load_ns == 5 * 5'000'000 + 1'000'000);
  CHECK(s.max_gpu == 2);
  CHECK_THROWS_AS(c.release(3), std::logic_error);  // not pinned any more
}

TEST_CASE("A host cache no larger than the GPU slots evicts what leaves the GPU", "[lora]") {
  LoraCache::Options o;
  o.max_loras = 2;
  o.max_cpu_loras = 2;  // vLLM's default: max_cpu_loras = max_loras
  o.pcie_gb_per_s = 4;
  o.disk_gb_per_s = 2;
  LoraCache c(o, {4e6}, {8e6});
  c.acquire(0);
  c.acquire(1);
  c.release(0);
  CHECK(c.acquire(2) == 5'000'000);  // 0 leaves the GPU and the host: 2 comes from disk
  CHECK_FALSE(c.on_gpu(0));
  c.release(1);
  CHECK(c.acquire(0) == 5'000'000);  // 0 was evicted from the host too
  CHECK(c.stats().loads_from_disk == 4);
  CHECK(c.stats().loads_from_cpu == 0);
}

namespace {

// Every step's adapters, as the cost model sees them.
struct AdapterRecorder : RunObserver {
  std::vector<std::size_t> distinct;
  void on_step(const StepRecord&, const BatchShape& shape, const StepCost&) override {
    std::set<std::int32_t> ids;
    for (const LoraSlice& s : shape.lora) ids.insert(s.adapter);
    CHECK(ids.size() == shape.lora.size());  // one slice per adapter
    distinct.push_back(shape.lora.size());
  }
};

struct LoraRun {
  EngineTotals totals;
  std::vector<std::size_t> distinct;
  LoraCache::Stats stats;
  SimTime makespan = 0;
};

// 60 requests over `adapters` adapters (adapter i mod `adapters`; -1 when 0) on one replica of
// `kind` with 2 slots.
LoraRun run_lora_kind(const std::string& kind, int adapters, bool lora) {
  GpuSpec gpu;
  ModelSpec model;
  SchedulerOptions o;
  o.max_num_batched_tokens = 512;
  o.max_num_seqs = 8;
  o.max_model_len = 4096;
  ReplicaSpec spec;
  spec.gpu = &gpu;
  spec.model = &model;
  Fleet fleet;
  fleet.push_back(std::make_unique<Replica>(
      0, spec, make_replica_scheduler(ConfigNode::parse("kind: " + kind, "test"), o),
      KvCache(1000, 16, 0.0), 4096));
  if (lora) {
    fleet[0]->lora = std::make_unique<LoraCache>(small_lora_cache());
    REQUIRE(fleet[0]->scheduler->attach_lora(fleet[0]->lora.get()));
  }
  std::vector<RequestSpec> specs;
  for (int i = 0; i < 60; ++i) {
    RequestSpec r{ms_to_sim(i * 2.0), 100 + 5 * i, 4 + i % 5, -1, 0};
    r.adapter = adapters > 0 ? i % adapters : -1;
    specs.push_back(r);
  }
  test::ListWorkload w(specs);
  RoundRobinRouter router;
  FixedCostModel cost{FixedCostModel::Params{10'000, 5'000'000, 0, 1}};
  AdapterRecorder rec;
  Engine engine({fleet, router, w, cost, {&rec}});
  LoraRun out;
  out.totals = engine.run();
  out.distinct = rec.distinct;
  if (lora) out.stats = fleet[0]->lora->stats();
  out.makespan = out.totals.end_time;
  return out;
}

}  // namespace

TEST_CASE("No step of any scheduler kind holds more adapters than LoRA slots", "[lora]") {
  for (const std::string kind : {"vllm", "sarathi", "orca", "edf"}) {
    INFO("kind " << kind);
    const LoraRun r = run_lora_kind(kind, 5, true);
    CHECK(r.totals.finished == 60);
    REQUIRE_FALSE(r.distinct.empty());
    std::size_t most = 0;
    for (const std::size_t d : r.distinct) most = std::max(most, d);
    CHECK(most == 2);  // the slots fill, and never overflow
    CHECK(r.stats.max_distinct == 2);
    CHECK(r.stats.steps == static_cast<std::int64_t>(r.distinct.size()));
    CHECK(r.stats.loads_from_disk >= 5);
    // The loads are paid in steps: slower than the same requests on the base model.
    CHECK(r.makespan > run_lora_kind(kind, 0, true).makespan);
  }
}

TEST_CASE("Base-model requests under a LoRA cache run exactly as without one", "[lora]") {
  for (const std::string kind : {"vllm", "sarathi"}) {
    INFO("kind " << kind);
    const LoraRun with = run_lora_kind(kind, 0, true);
    const LoraRun without = run_lora_kind(kind, 0, false);
    CHECK(with.makespan == without.makespan);
    CHECK(with.totals.steps == without.totals.steps);
    CHECK(with.stats.loads_from_disk == 0);
  }
}

}  // namespace servesim
