#include "schedulers/replica/orca_scheduler.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using servesim::test::SchedulerHarness;
using Trace = std::vector<std::string>;

namespace {

SchedulerHarness orca(std::int32_t budget, std::int32_t max_num_seqs, KvCache kv) {
  SchedulerOptions o;
  o.max_num_batched_tokens = budget;
  o.max_num_seqs = max_num_seqs;
  return SchedulerHarness(std::make_unique<OrcaScheduler>(o), kv);
}

}  // namespace

TEST_CASE("Orca mixes new prompts with the decodes of running requests", "[schedulers][orca]") {
  auto h = orca(0, 128, KvCache(100, 16, 0.0));
  h.add(10, 3);  // A
  REQUIRE(h.trace(1) == Trace{"A:10"});
  h.add(20, 2);  // B
  CHECK(h.trace(10) == Trace{"A:1 B:20", "A:1 B:1"});
  CHECK(h.request(0).generated == 3);
  CHECK(h.request(1).generated == 2);
}

TEST_CASE("Orca reserves KV for prompt and output at admission and never preempts",
          "[schedulers][orca]") {
  // 20 blocks of 16 tokens; each request needs 102 tokens = 7 blocks for its whole life (its
  // last token's KV is never written).
  auto h = orca(0, 128, KvCache(20, 16, 0.0));
  h.add(100, 3);  // A
  h.add(100, 3);  // B
  h.add(100, 3);  // C: 21 blocks would be needed
  REQUIRE(h.trace(1) == Trace{"A:100 B:100"});
  CHECK(h.request(0).kv_blocks == 7);
  CHECK(h.request(1).kv_blocks == 7);
  CHECK(h.kv().used_blocks() == 14);
  REQUIRE(h.trace(1) == Trace{"A:1 B:1"});
  CHECK(h.request(0).kv_blocks == 7);  // no growth while decoding
  CHECK(h.trace(10) == Trace{"A:1 B:1", "C:100", "C:1", "C:1"});
  CHECK(h.preemptions() == 0);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("Orca reserves prompt + output - 1 tokens: a request needing the whole cache runs",
          "[schedulers][orca]") {
  // 7 blocks of 16 = 112 tokens: 100 + 13 peaks at 112 tokens of KV, exactly the cache.
  auto h = orca(0, 128, KvCache(7, 16, 0.0));
  h.add(100, 13);
  REQUIRE(h.trace(1) == Trace{"A:100"});
  CHECK(h.request(0).kv_blocks == 7);
  h.trace(20);
  CHECK(h.request(0).generated == 13);
  CHECK(h.request(0).computed == 112);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("Orca keeps a step within the token budget and max_num_seqs", "[schedulers][orca]") {
  SECTION("token budget") {
    auto h = orca(128, 128, KvCache(100, 16, 0.0));
    h.add(100, 2);  // A
    h.add(50, 2);   // B: 150 > 128
    CHECK(h.trace(10) == Trace{"A:100", "A:1 B:50", "B:1"});
  }
  SECTION("a prompt larger than the budget runs alone") {
    auto h = orca(128, 128, KvCache(100, 16, 0.0));
    h.add(200, 2);  // A
    h.add(1, 2);    // B
    CHECK(h.trace(10) == Trace{"A:200", "A:1 B:1", "B:1"});
  }
  SECTION("max_num_seqs") {
    auto h = orca(0, 2, KvCache(100, 16, 0.0));
    h.add(10, 2);
    h.add(10, 2);
    h.add(10, 2);
    CHECK(h.trace(10) == Trace{"A:10 B:10", "A:1 B:1", "C:10", "C:1"});
  }
}

TEST_CASE("Orca's batch waiting holds prompts back until the budget fills or the count runs out",
          "[schedulers][orca]") {
  SchedulerOptions o;
  o.max_num_batched_tokens = 100;
  o.batch_wait_timeout_iters = 2;
  o.batch_wait_max_tokens_ratio = 0.5;
  SECTION("a lone prompt waits the whole count beside running decodes") {
    SchedulerHarness h(std::make_unique<OrcaScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 10);  // A: nothing runs, so it is admitted at once
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(10, 2);  // B: 10 + 1 tokens < 50, held for two steps, then admitted
    CHECK(h.trace(3) == Trace{"A:1", "A:1", "A:1 B:10"});
    h.add(10, 2);  // C: the count started again
    CHECK(h.trace(3) == Trace{"A:1 B:1", "A:1", "A:1 C:10"});
  }
  SECTION("prompts that fill the ratio of the budget go at once") {
    SchedulerHarness h(std::make_unique<OrcaScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 4);  // A
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(30, 2);  // B: 30 + 1 < 50 waits
    CHECK(h.trace(1) == Trace{"A:1"});
    h.add(30, 2);  // C: 60 + 1 ≥ 50
    CHECK(h.trace(1) == Trace{"A:1 B:30 C:30"});
  }
  SECTION("off without a count, as TensorRT-LLM's rule") {
    o.batch_wait_timeout_iters = 0;
    SchedulerHarness h(std::make_unique<OrcaScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 4);
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(10, 2);
    CHECK(h.trace(1) == Trace{"A:1 B:10"});
  }
}
