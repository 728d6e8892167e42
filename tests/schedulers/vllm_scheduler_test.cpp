#include "schedulers/replica/vllm_scheduler.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using servesim::test::SchedulerHarness;
using Trace = std::vector<std::string>;

namespace {

SchedulerHarness vllm(std::int32_t budget, std::int32_t max_num_seqs, KvCache kv) {
  SchedulerOptions o;
  o.max_num_batched_tokens = budget;
  o.max_num_seqs = max_num_seqs;
  return SchedulerHarness(std::make_unique<VllmScheduler>(o), kv);
}

}  // namespace

TEST_CASE("vLLM V0 runs prefill-only or decode-only iterations, prefills first",
          "[schedulers][vllm]") {
  auto h = vllm(0, 128, KvCache(100, 16, 0.0));
  h.add(10, 3);  // A
  REQUIRE(h.trace(1) == Trace{"A:10"});
  h.add(5, 2);  // B arrives while A is decoding: A pauses for B's prefill
  CHECK(h.trace(10) == Trace{"B:5", "A:1 B:1", "A:1"});
  CHECK(h.request(0).generated == 3);
  CHECK(h.request(1).generated == 2);
}

TEST_CASE("vLLM V0 never splits a prompt and stops admitting at the first that does not fit",
          "[schedulers][vllm]") {
  auto h = vllm(16, 128, KvCache(100, 16, 0.0));
  h.add(10, 2);  // A
  h.add(10, 2);  // B: 10 > 6 tokens left; FCFS, so C waits too although it would fit
  h.add(6, 2);   // C
  CHECK(h.trace(10) == Trace{"A:10", "B:10 C:6", "A:1 B:1 C:1"});
  CHECK(h.finished().size() == 3);
}

TEST_CASE("vLLM V0's default budget is max(max_model_len, 2048)", "[schedulers][vllm]") {
  SchedulerOptions o;
  o.max_model_len = 4096;
  SchedulerHarness h(std::make_unique<VllmScheduler>(o), KvCache(1000, 16, 0.0));
  h.add(3000, 1);
  h.add(1096, 1);
  h.add(1, 1);
  CHECK(h.trace(3) == Trace{"A:3000 B:1096", "C:1"});
  SchedulerHarness small(std::make_unique<VllmScheduler>(SchedulerOptions{}),
                         KvCache(1000, 16, 0.0));
  small.add(2000, 1);
  small.add(48, 1);
  small.add(1, 1);
  CHECK(small.trace(3) == Trace{"A:2000 B:48", "C:1"});
}

TEST_CASE("vLLM V0 never runs more than max_num_seqs requests", "[schedulers][vllm]") {
  auto h = vllm(0, 2, KvCache(100, 16, 0.0));
  h.add(4, 3);
  h.add(4, 3);
  h.add(4, 3);
  CHECK(h.trace(10) == Trace{"A:4 B:4", "A:1 B:1", "A:1 B:1", "C:4", "C:1", "C:1"});
}

TEST_CASE("vLLM V0 admits a prompt only if the watermark stays free", "[schedulers][vllm]") {
  // 100 blocks of 16 tokens, watermark 10 blocks. A takes 50 blocks.
  SECTION("a prompt leaving 9 free blocks waits") {
    auto h = vllm(0, 128, KvCache(100, 16, 0.1));
    REQUIRE(h.kv().watermark_blocks() == 10);
    h.add(800, 2);  // A
    h.add(656, 2);  // B: 41 blocks
    CHECK(h.trace(10) == Trace{"A:800", "A:1", "B:656", "B:1"});
  }
  SECTION("a prompt leaving exactly 10 free blocks is admitted") {
    auto h = vllm(0, 128, KvCache(100, 16, 0.1));
    h.add(800, 2);  // A
    h.add(640, 2);  // B: 40 blocks
    CHECK(h.trace(10) == Trace{"A:800 B:640", "A:1 B:1"});
  }
}

TEST_CASE("vLLM V0 preempts the newest request and recomputes it after the others finish",
          "[schedulers][vllm][preemption]") {
  // 6 blocks of 4 tokens, no watermark.
  auto h = vllm(0, 128, KvCache(6, 4, 0.0));
  h.add(8, 10);  // A
  h.add(8, 10);  // B
  REQUIRE(h.trace(5) == Trace{"A:8 B:8", "A:1 B:1", "A:1 B:1", "A:1 B:1", "A:1 B:1"});
  CHECK(h.kv().used_blocks() == 6);
  // A needs a 4th block: B (3 blocks, 5 tokens generated) goes back to the front of the queue.
  h.form();
  CHECK(h.entries() == "A:1");
  CHECK(h.batch().preempted == 1);
  const Request& b = h.request(1);
  CHECK(b.preemptions == 1);
  CHECK(b.computed == 0);
  CHECK(b.kv_blocks == 0);
  CHECK(b.generated == 5);
  CHECK(h.kv().used_blocks() == 4);
  h.apply();
  // B's recompute prefill (8 + 5 = 13 tokens, 4 blocks) does not fit beside A (4, then 5 blocks)
  // until A finishes; it then emits B's 6th token and B decodes to exactly 10.
  CHECK(h.trace(20) == Trace{"A:1", "A:1", "A:1", "A:1", "B:13", "B:1", "B:1", "B:1", "B:1"});
  CHECK(h.request(0).generated == 10);
  CHECK(b.generated == 10);
  CHECK(b.computed == 17);
  CHECK(h.preemptions() == 1);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("vLLM V0 readmits requests preempted in one step in their original order",
          "[schedulers][vllm][preemption]") {
  // 4 blocks of 4 tokens; four one-block prompts fill the cache.
  auto h = vllm(0, 128, KvCache(4, 4, 0.0));
  h.add(4, 2);  // A
  h.add(4, 2);  // B
  h.add(4, 3);  // C
  h.add(4, 3);  // D
  REQUIRE(h.trace(1) == Trace{"A:4 B:4 C:4 D:4"});
  // A's second block costs D, B's costs C: C is preempted last, so it heads the queue.
  CHECK(h.trace(1) == Trace{"A:1 B:1 (preempted 2)"});
  CHECK(h.request(2).preemptions == 1);
  CHECK(h.request(3).preemptions == 1);
  CHECK(h.trace(10) == Trace{"C:5 D:5", "C:1 D:1"});
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("With prefix caching vLLM V0 prefills only the blocks its group has not cached",
          "[schedulers][vllm][prefix]") {
  auto h = vllm(0, 128, KvCache(100, 16, 0.0));
  h.kv().set_prefix_caching(true);
  h.add(64, 2, /*prefix_group=*/1, /*prefix_tokens=*/48);  // A
  REQUIRE(h.trace(1) == Trace{"A:64"});
  CHECK(h.request(0).kv_shared == 3);  // 48 prefix tokens = 3 full blocks published
  h.add(64, 2, 1, 48);                 // B
  REQUIRE(h.trace(1) == Trace{"B:16"});
  const Request& b = h.request(1);
  CHECK(b.cached_prefix == 48);
  CHECK(b.kv_blocks == 4);
  CHECK(b.kv_shared == 3);
  CHECK(h.kv().used_blocks() == 5);  // A's 4 blocks and B's one private block
  CHECK(h.trace(10) == Trace{"A:1 B:1"});
  CHECK(h.kv().used_blocks() == 0);
  CHECK(h.kv().cached_free_blocks() == 3);  // freed but still cached
  h.add(64, 2, 1, 48);                      // C reuses the cached blocks
  h.add(64, 2, 2, 48);                      // D: another group, nothing cached
  CHECK(h.trace(10) == Trace{"C:16 D:64", "C:1 D:1"});
  CHECK(h.kv().prefix_query_blocks() == 12);
  CHECK(h.kv().prefix_hit_blocks() == 6);
  CHECK(b.generated == 2);
}
