// The CPU KV tier (KvOffload) with the GPU cache and the schedulers: its LRU and byte identity,
// a hand-counted prefix hit on the CPU tier, and preemption by swap instead of recompute.

#include "sim/engine/kv_offload.hpp"

#include <cstdint>
#include <memory>
#include <random>

#include <catch2/catch.hpp>

#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/replica/vllm_scheduler.hpp"
#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using servesim::test::SchedulerHarness;

namespace {

constexpr double kBlockBytes = 1000;
constexpr double kBlockNs = 10;

// What the tier holds balances what moved: stored − dropped − swapped in == resident.
void check_identity(const KvOffload& t) {
  CHECK(t.stored_blocks() - t.dropped_blocks() - t.swapped_in_blocks() == t.resident_blocks());
  CHECK(t.resident_blocks() <= t.capacity_blocks());
  CHECK(t.peak_blocks() <= t.capacity_blocks());
}

SchedulerHarness vllm_with(KvCache kv) {
  SchedulerOptions o;
  o.max_num_seqs = 128;
  return SchedulerHarness(std::make_unique<VllmScheduler>(o), kv);
}

KvCache cache_with_tier(std::int64_t gpu_blocks, std::int32_t block_size, bool prefix_caching,
                        std::int64_t cpu_blocks) {
  KvCache kv(gpu_blocks, block_size, 0.0);
  kv.set_prefix_caching(prefix_caching);
  kv.set_offload(std::make_shared<KvOffload>(cpu_blocks, kBlockBytes, kBlockNs, false));
  return kv;
}

}  // namespace

TEST_CASE("the CPU tier drops least recently used copies and refuses swaps it cannot hold",
          "[kv_offload]") {
  KvOffload t(4, kBlockBytes, kBlockNs, false);
  t.store_cached({1, 0});
  t.store_cached({1, 1});
  t.store_cached({1, 2});
  t.store_cached({1, 0});  // already held: refreshed, nothing moves
  CHECK(t.stored_blocks() == 3);
  CHECK(t.swap_out(/*request=*/9, 2));  // drops the least recently used copy, (1, 1)
  CHECK(t.dropped_blocks() == 1);
  CHECK_FALSE(t.holds({1, 1}));
  CHECK(t.holds({1, 0}));
  CHECK(t.holds({1, 2}));
  CHECK_FALSE(t.swap_out(/*request=*/8, 3));  // 2 swapped + 3 > 4, even with every copy dropped
  CHECK(t.swaps_out() == 1);
  check_identity(t);
  t.load_cached({1, 2});
  CHECK(t.swap_in(9) == 2);
  CHECK(t.swap_in(9) == 0);
  CHECK(t.take_load_ns() == 3 * 10);  // 1 copy + 2 swapped blocks, 10 ns each
  CHECK(t.take_load_ns() == 0);
  CHECK(t.cpu_hit_blocks() == 1);
  CHECK(t.loaded_blocks() == 3);
  CHECK(t.peak_blocks() == 4);
  check_identity(t);
}

TEST_CASE("a prefix evicted from the GPU is found on the CPU tier and loaded back",
          "[kv_offload]") {
  // 6 GPU blocks of 4 tokens. A (group 1, 16 tokens) leaves 4 cached blocks; B (group 2, 24
  // tokens) needs all 6 and evicts A's 4 to the CPU. C (group 1) misses the GPU and finds A's
  // first 3 blocks (the last token is always computed) on the CPU: 3 CPU hits. Loading them and
  // growing by one block evicts 4 of B's blocks to the CPU: 8 stored in all.
  auto h = vllm_with(cache_with_tier(6, 4, /*prefix_caching=*/true, /*cpu_blocks=*/10));
  const KvOffload& t = *h.kv().offload();
  h.add(16, 1, /*prefix_group=*/1, /*prefix_tokens=*/16);
  REQUIRE(h.run_to_completion());
  CHECK(t.stored_blocks() == 0);
  h.add(24, 1, /*prefix_group=*/2, /*prefix_tokens=*/24);
  REQUIRE(h.run_to_completion());
  CHECK(t.stored_blocks() == 4);
  CHECK(h.kv().prefix_evictions() == 4);
  h.add(16, 1, /*prefix_group=*/1, /*prefix_tokens=*/16);
  h.form();
  CHECK(h.entries() == "C:4");  // 12 tokens came from the CPU tier
  CHECK(h.request(2).cached_prefix == 12);
  CHECK(t.cpu_hit_blocks() == 3);
  CHECK(t.loaded_blocks() == 3);
  CHECK(t.stored_blocks() == 8);
  CHECK(h.kv().prefix_hit_blocks() == 3);
  CHECK(h.kv().used_blocks() == 4);
  CHECK(h.kv().offload()->take_load_ns() == 3 * 10);
  h.apply();
  CHECK(h.finished().size() == 3);
  check_identity(t);
}

TEST_CASE("a full CPU tier drops its oldest copies and a dropped prefix is recomputed",
          "[kv_offload]") {
  // As above with room for 2 blocks: of A's 4 evicted blocks (freed tail first: 3, 2, 1, 0) the
  // tier keeps the last two stored, blocks 1 and 0. C then finds blocks 0 and 1 (2 CPU hits) and
  // computes from token 8.
  auto h = vllm_with(cache_with_tier(6, 4, /*prefix_caching=*/true, /*cpu_blocks=*/2));
  const KvOffload& t = *h.kv().offload();
  h.add(16, 1, 1, 16);
  REQUIRE(h.run_to_completion());
  h.add(24, 1, 2, 24);
  REQUIRE(h.run_to_completion());
  CHECK(t.dropped_blocks() == 2);
  h.add(16, 1, 1, 16);
  h.form();
  CHECK(h.entries() == "C:8");
  CHECK(t.cpu_hit_blocks() == 2);
  h.apply();
  check_identity(t);
}

namespace {

struct RunTotals {
  std::int64_t computed_tokens = 0;
  std::int64_t preemptions = 0;
  std::int64_t steps = 0;
};

// A random workload on a small cache (no prefix caching); with `cpu_blocks` ≥ 0 a CPU tier.
RunTotals run_pressured(std::int64_t cpu_blocks, std::shared_ptr<const KvOffload>* tier_out) {
  KvCache kv(64, 16, 0.0);
  if (cpu_blocks >= 0) {
    kv.set_offload(std::make_shared<KvOffload>(cpu_blocks, kBlockBytes, kBlockNs, false));
  }
  SchedulerOptions o;
  o.max_num_batched_tokens = 256;
  o.max_num_seqs = 32;
  SchedulerHarness h(std::make_unique<SarathiScheduler>(o), kv);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 60; ++i) {
    h.add(64 + static_cast<std::int32_t>(rng() % 256), 32 + static_cast<std::int32_t>(rng() % 96));
  }
  RunTotals out;
  while (h.finished().size() < h.requests().size()) {
    REQUIRE(!h.form().empty());
    for (const BatchEntry& e : h.batch().entries) out.computed_tokens += e.tokens;
    h.apply();
    REQUIRE(h.steps() < 100000);
  }
  out.preemptions = h.preemptions();
  out.steps = h.steps();
  CHECK(h.kv().used_blocks() == 0);
  if (tier_out != nullptr && h.kv().offload() != nullptr) {
    *tier_out = std::make_shared<KvOffload>(*h.kv().offload());
  }
  return out;
}

}  // namespace

TEST_CASE("preemption swaps to the CPU tier instead of recomputing, and every request finishes",
          "[kv_offload]") {
  const RunTotals recompute = run_pressured(-1, nullptr);
  REQUIRE(recompute.preemptions > 0);
  std::shared_ptr<const KvOffload> tier;
  const RunTotals swap = run_pressured(1 << 20, &tier);
  REQUIRE(tier != nullptr);
  REQUIRE(swap.preemptions > 0);
  // Every preemption of a request with computed KV swapped it out, and every swap came back.
  CHECK(tier->swaps_out() > 0);
  CHECK(tier->swaps_in() == tier->swaps_out());
  CHECK(tier->recomputes() == 0);
  CHECK(tier->resident_blocks() == 0);
  CHECK(tier->loaded_blocks() == tier->stored_blocks());
  check_identity(*tier);
  // Nothing is computed twice: each request computes its prompt and outputs once.
  CHECK(swap.computed_tokens < recompute.computed_tokens);

  SECTION("an empty tier falls back to recompute for every preemption") {
    std::shared_ptr<const KvOffload> none;
    const RunTotals full = run_pressured(0, &none);
    REQUIRE(none != nullptr);
    CHECK(none->swaps_out() == 0);
    CHECK(none->recomputes() > 0);
    CHECK(none->recomputes() <= full.preemptions);
    CHECK(full.computed_tokens == recompute.computed_tokens);
    CHECK(full.steps == recompute.steps);
  }
}
