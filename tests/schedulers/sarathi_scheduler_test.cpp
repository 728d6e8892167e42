#include "schedulers/replica/sarathi_scheduler.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using servesim::test::SchedulerHarness;
using Trace = std::vector<std::string>;

namespace {

SchedulerHarness sarathi(std::int32_t budget, std::int32_t max_num_seqs, KvCache kv,
                         bool async = false) {
  SchedulerOptions o;
  o.max_num_batched_tokens = budget;
  o.max_num_seqs = max_num_seqs;
  o.async_scheduling = async;
  return SchedulerHarness(std::make_unique<SarathiScheduler>(o), kv);
}

}  // namespace

TEST_CASE("Sarathi splits a long prompt into chunks that fill the token budget",
          "[schedulers][sarathi]") {
  auto h = sarathi(512, 128, KvCache(1000, 16, 0.0));
  h.add(1000, 3);  // A
  h.add(300, 3);   // B
  // A takes the whole budget; its last chunk (488) leaves 24 tokens for B's first chunk; then A
  // decodes (1 token, first) while B finishes its prompt (276); then both decode.
  CHECK(h.trace(10) == Trace{"A:512", "A:488 B:24", "A:1 B:276", "A:1 B:1", "B:1"});
  CHECK(h.finished().size() == 2);
  CHECK(h.request(0).generated == 3);
  CHECK(h.request(0).computed == 1002);  // the third token's KV is never written
  CHECK(h.request(1).generated == 3);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("Sarathi schedules decodes, then the ongoing prefill, then new requests",
          "[schedulers][sarathi]") {
  auto h = sarathi(8, 128, KvCache(100, 16, 0.0));
  h.add(6, 4);   // A: whole prompt in step 1
  h.add(20, 2);  // B: starts with the 2 tokens A leaves
  h.add(2, 3);   // C: admitted once B's prompt is done and budget is left
  CHECK(h.trace(20) == Trace{"A:6 B:2", "A:1 B:7", "A:1 B:7", "A:1 B:4 C:2", "B:1 C:1", "C:1"});
  for (auto& r : h.requests()) CHECK(r.generated == r.spec.output_tokens);
}

TEST_CASE("Sarathi gives the budget to running decodes before admitting a prompt",
          "[schedulers][sarathi]") {
  auto h = sarathi(2, 128, KvCache(100, 16, 0.0));
  h.add(1, 4);  // A
  h.add(1, 4);  // B
  h.add(5, 2);  // C: no budget left while A and B decode
  CHECK(h.trace(10) ==
        Trace{"A:1 B:1", "A:1 B:1", "A:1 B:1", "A:1 B:1", "C:2", "C:2", "C:1", "C:1"});
}

TEST_CASE("Sarathi never runs more than max_num_seqs requests", "[schedulers][sarathi]") {
  auto h = sarathi(512, 2, KvCache(100, 16, 0.0));
  h.add(10, 2);
  h.add(10, 2);
  h.add(10, 2);
  CHECK(h.trace(10) == Trace{"A:10 B:10", "A:1 B:1", "C:10", "C:1"});
}

TEST_CASE("Sarathi preempts the newest running request when a decode needs a block",
          "[schedulers][sarathi][preemption]") {
  // 5 blocks of 4 tokens, no watermark.
  auto h = sarathi(16, 128, KvCache(5, 4, 0.0));
  h.add(8, 3);  // A: 2 blocks
  h.add(4, 3);  // B: 1 block
  h.add(4, 3);  // C: 1 block
  REQUIRE(h.trace(1) == Trace{"A:8 B:4 C:4"});
  CHECK(h.kv().used_blocks() == 4);
  // A grows to 3 blocks (the last free one); B needs a second block, so C (newest) is preempted.
  h.form();
  CHECK(h.entries() == "A:1 B:1");
  CHECK(h.batch().preempted == 1);
  const Request& c = h.request(2);
  CHECK(c.preemptions == 1);
  CHECK(c.computed == 0);
  CHECK(c.kv_blocks == 0);
  CHECK(c.generated == 1);  // the token emitted before preemption stays emitted
  CHECK(h.kv().used_blocks() == 5);
  CHECK(h.scheduler().num_running() == 2);
  CHECK(h.scheduler().num_outstanding() == 3);
  h.apply();
  // C recomputes its prompt and its one generated token (5 tokens, 2 blocks) once A and B end.
  CHECK(h.trace(10) == Trace{"A:1 B:1", "C:5", "C:1"});
  CHECK(c.generated == 3);
  CHECK(h.request(0).preemptions == 0);
  CHECK(h.request(1).preemptions == 0);
  CHECK(h.preemptions() == 1);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("Sarathi admits nothing in an iteration that preempted, as vLLM V1 does",
          "[schedulers][sarathi][preemption][prefix]") {
  // 4 blocks of 4 tokens, budget 4; without and with prefix caching.
  const bool caching = GENERATE(false, true);
  INFO("prefix caching " << caching);
  auto h = sarathi(4, 128, KvCache(4, 4, 0.0));
  h.kv().set_prefix_caching(caching);
  h.add(4, 7);  // A
  h.add(7, 8);  // B
  REQUIRE(h.trace(5) == Trace{"A:4", "A:1 B:3", "A:1 B:3", "A:1 B:1", "A:1 B:1"});
  // A needs its third block: B (2 blocks) is preempted, A takes one. B's first chunk (3 tokens,
  // 1 block) would fit the block left, but the iteration that preempted admits nothing.
  h.form();
  CHECK(h.entries() == "A:1");
  CHECK(h.batch().preempted == 1);
  CHECK(h.kv().free_blocks() == 1);
  CHECK(h.request(1).computed == 0);
  CHECK(h.request(1).generated == 2);
  h.apply();
  if (!caching) {
    // Next iteration B is readmitted and recomputes 7 + 2 = 9 tokens in chunks, then decodes.
    CHECK(h.trace(20) == Trace{"A:1 B:3", "B:4", "B:2", "B:1", "B:1", "B:1", "B:1", "B:1"});
  } else {
    // vLLM hashes every full block: B's two computed blocks stayed cached when it was
    // preempted, and A's new block evicted B's tail block (freed first). B's 5 pending tokens
    // start from its surviving first block; that revived block and a new one exceed the one
    // free block while A runs, so B waits for A, then recomputes 4 + 1 tokens, not 9.
    CHECK(h.kv().cached_free_blocks() == 1);
    CHECK(h.kv().prefix_evictions() == 1);
    CHECK(h.trace(20) == Trace{"A:1", "B:4", "B:1", "B:1", "B:1", "B:1", "B:1", "B:1"});
    CHECK(h.request(1).cached_prefix == 4);
    CHECK(h.kv().prefix_hit_blocks() == 1);
  }
  CHECK(h.request(0).generated == 7);
  CHECK(h.request(1).generated == 8);
  CHECK(h.request(1).preemptions == 1);
  CHECK(h.kv().used_blocks() == 0);
}

TEST_CASE("Sarathi keeps the watermark free when it admits but not when it grows",
          "[schedulers][sarathi]") {
  // 10 blocks of 4 tokens, watermark 2 blocks.
  auto h = sarathi(64, 128, KvCache(10, 4, 0.2));
  REQUIRE(h.kv().watermark_blocks() == 2);
  h.add(24, 13);  // A: 6 blocks, 9 at its last decode
  h.add(9, 2);    // B: 3 blocks would leave fewer than 2 free
  REQUIRE(h.trace(1) == Trace{"A:24"});
  CHECK(h.kv().used_blocks() == 6);
  CHECK(h.trace(11) == Trace(11, "A:1"));
  // A's decodes grew into the watermark; B still waits.
  CHECK(h.request(0).kv_blocks == 9);
  CHECK(h.kv().free_blocks() == 1);
  CHECK(h.trace(10) == Trace{"A:1", "B:9", "B:1"});
  CHECK(h.request(1).generated == 2);
}

TEST_CASE("With async scheduling a request arriving mid-step joins one batch later, unless idle",
          "[schedulers][sarathi]") {
  for (const bool async : {false, true}) {
    INFO("async " << async);
    auto h = sarathi(64, 128, KvCache(100, 16, 0.0), async);
    h.add(4, 5);  // A
    CHECK(h.form().entries.size() == 1);
    h.add(8, 2).spec.arrival = h.now() + 1;  // B arrives while A's first step runs
    h.apply();
    if (async) {
      // The batch after A's first step was decided when that step began: B is not in it.
      CHECK(h.trace(3) == Trace{"A:1", "A:1 B:8", "A:1 B:1"});
    } else {
      CHECK(h.trace(3) == Trace{"A:1 B:8", "A:1 B:1", "A:1"});
    }
  }
  // Nothing in flight: the replica would idle, so the late arrival is scheduled at once.
  auto h = sarathi(64, 128, KvCache(100, 16, 0.0), /*async=*/true);
  h.add(2, 1);  // A: done after one step
  CHECK(h.form().entries.size() == 1);
  h.add(3, 1).spec.arrival = h.now() + 1;  // B
  h.apply();
  CHECK(h.trace(2) == Trace{"B:3"});
}

TEST_CASE("Requests admitted in one step share the prefix blocks an earlier one computes in it",
          "[schedulers][sarathi][prefix]") {
  // vLLM V1 caches a block's hash when it allocates the block, so a request admitted after A in
  // the same schedule() hits A's prefix blocks although their KV is written in this very step.
  auto h = sarathi(8192, 128, KvCache(1000, 16, 0.0));
  h.kv().set_prefix_caching(true);
  for (int i = 0; i < 4; ++i) h.add(1024, 2, /*prefix_group=*/7, /*prefix_tokens=*/1000);
  // 1000 prefix tokens = 62 full blocks (992 tokens): B, C and D compute only their last 32.
  REQUIRE(h.trace(1) == Trace{"A:1024 B:32 C:32 D:32"});
  for (int i = 1; i < 4; ++i) {
    CHECK(h.request(i).cached_prefix == 992);
    CHECK(h.request(i).kv_shared == 62);
  }
  CHECK(h.kv().used_blocks() == 64 + 3 * 2);  // A's 64 blocks, 2 private blocks each for B-D
  CHECK(h.kv().prefix_hit_blocks() == 3 * 62);
  h.trace(10);
  CHECK(h.kv().used_blocks() == 0);
  CHECK(h.kv().cached_free_blocks() == 62);
}

TEST_CASE("A request that cannot be admitted leaves the cached blocks it would hit in place",
          "[schedulers][sarathi][prefix]") {
  // vLLM V1 checks the free blocks before it takes anything: the waiting head's cached prefix
  // keeps its place in the free queue and is evicted in its turn.
  auto h = sarathi(64, 8, KvCache(5, 4, 0.0));
  h.kv().set_prefix_caching(true);
  h.add(4, 1, /*prefix_group=*/1, /*prefix_tokens=*/4);  // A
  h.add(4, 1, /*prefix_group=*/2, /*prefix_tokens=*/4);  // B
  REQUIRE(h.trace(1) == Trace{"A:4 B:4"});               // free queue: 3 plain, (1,0), (2,0)
  h.add(12, 3);        // C: 3 plain blocks, a 4th at its first decode
  h.add(16, 1, 1, 4);  // D: would hit (1,0) but needs 3 more blocks
  REQUIRE(h.trace(1) == Trace{"C:12"});
  CHECK(h.kv().cached_free_blocks() == 2);
  // C's decode takes the head of the queue: group 1's block, freed first.
  REQUIRE(h.trace(1) == Trace{"C:1"});
  CHECK(h.kv().prefix_evictions() == 1);
  CHECK(h.kv().cached_prefix(1, 1) == 0);
  CHECK(h.kv().cached_prefix(2, 1) == 1);
  h.trace(10);
  CHECK(h.request(3).generated == 1);
  CHECK(h.request(3).cached_prefix == 0);  // its prefix was evicted in its turn
}

TEST_CASE("With async scheduling a request finishing in the step in flight keeps its seat",
          "[schedulers][sarathi]") {
  // vLLM V1 forms step N+1 before it processes step N's output, so a request that finishes in N
  // still counts against max_num_seqs (and holds its KV) while N+1 is formed.
  for (const bool async : {false, true}) {
    INFO("async " << async);
    auto h = sarathi(64, 2, KvCache(100, 16, 0.0), async);
    h.add(4, 10);  // A
    h.add(4, 2);   // B: done after its first decode
    REQUIRE(h.trace(1) == Trace{"A:4 B:4"});
    h.add(4, 1);  // C waits for a seat; it arrived before the second step began
    REQUIRE(h.trace(1) == Trace{"A:1 B:1"});
    CHECK(h.request(1).done());
    if (async) {
      CHECK(h.trace(2) == Trace{"A:1", "A:1 C:4"});
    } else {
      CHECK(h.trace(2) == Trace{"A:1 C:4", "A:1"});
    }
    h.trace(20);
    CHECK(h.kv().used_blocks() == 0);  // the held blocks are released
  }
}

TEST_CASE("With async scheduling an iteration that only preempted is followed at once",
          "[schedulers][sarathi][preemption]") {
  // B finishes in the first step but, async, still holds its 6 blocks while the next batch is
  // formed: A's first decode needs a 5th block and preempts A itself. vLLM then schedules again
  // at once with B's blocks free; the replica must not idle with A waiting.
  for (const bool async : {false, true}) {
    INFO("async " << async);
    auto h = sarathi(512, 128, KvCache(10, 16, 0.0), async);
    h.add(64, 2);  // A
    h.add(96, 1);  // B
    REQUIRE(h.trace(1) == Trace{"A:64 B:96"});
    if (async) {
      CHECK(h.trace(1) == Trace{"A:65 (preempted 1)"});  // recomputes 64 + 1 tokens
      CHECK(h.request(0).preemptions == 1);
    } else {
      CHECK(h.trace(1) == Trace{"A:1"});
    }
    CHECK(h.request(0).done());
    h.form();  // async: a finished request's KV is released when the next batch is formed
    CHECK(h.batch().entries.empty());
    CHECK(h.kv().used_blocks() == 0);
  }
}

TEST_CASE("with a receive interval a busy replica takes in arrivals every n decode steps",
          "[scheduler][sarathi]") {
  SchedulerOptions o;
  o.max_num_batched_tokens = 64;
  o.scheduler_recv_interval = 3;
  SECTION("an arrival waits for the count; a step with prompt tokens fills it") {
    SchedulerHarness h(std::make_unique<SarathiScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 10);  // A: the replica is idle, so it is taken in at once
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(10, 5);  // B: three decode steps count to 3, then B is taken in
    CHECK(h.scheduler().num_outstanding() == 2);
    CHECK(h.trace(4) == Trace{"A:1", "A:1", "A:1", "A:1 B:10"});
    h.add(10, 2);  // C: B's prompt step counted 3, but C came after it: three more decodes
    CHECK(h.trace(4) == Trace{"A:1 B:1", "A:1 B:1", "A:1 B:1", "A:1 B:1 C:10"});
  }
  SECTION("a replica that runs dry takes in what waits") {
    SchedulerHarness h(std::make_unique<SarathiScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 2);
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(10, 2);  // B: A finishes with its next token, and B goes in the step after
    CHECK(h.trace(2) == Trace{"A:1", "B:10"});
  }
  SECTION("off at 1, as SGLang's default") {
    o.scheduler_recv_interval = 1;
    SchedulerHarness h(std::make_unique<SarathiScheduler>(o), KvCache(100, 16, 0.0));
    h.add(10, 10);
    REQUIRE(h.trace(1) == Trace{"A:10"});
    h.add(10, 2);
    CHECK(h.trace(1) == Trace{"A:1 B:10"});
  }
}
