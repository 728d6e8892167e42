#include "sim/engine/kv_cache.hpp"

#include <catch2/catch.hpp>

using servesim::KvCache;

TEST_CASE("KV blocks are counted per 16-token block and released exactly", "[kv_cache]") {
  KvCache kv(100, 16, 0.0);
  std::int64_t a = 0;
  CHECK(kv.blocks_for_tokens(1) == 1);
  CHECK(kv.blocks_for_tokens(16) == 1);
  CHECK(kv.blocks_for_tokens(17) == 2);
  REQUIRE(kv.grow(a, 33));
  CHECK(a == 3);
  CHECK(kv.used_blocks() == 3);
  REQUIRE(kv.grow(a, 48));  // still 3 blocks
  CHECK(kv.used_blocks() == 3);
  REQUIRE(kv.grow(a, 49));
  CHECK(a == 4);
  kv.release(a);
  CHECK(a == 0);
  CHECK(kv.used_blocks() == 0);
}

TEST_CASE("Growing past capacity fails without changing anything", "[kv_cache]") {
  KvCache kv(10, 16, 0.0);
  std::int64_t a = 0, b = 0;
  REQUIRE(kv.grow(a, 16 * 8));
  CHECK_FALSE(kv.grow(b, 16 * 3));
  CHECK(b == 0);
  CHECK(kv.used_blocks() == 8);
  REQUIRE(kv.grow(b, 16 * 2));
  CHECK(kv.free_blocks() == 0);
}

TEST_CASE("The watermark keeps blocks free for new admissions only", "[kv_cache]") {
  KvCache kv(100, 16, 0.05);  // 5 blocks of watermark
  CHECK(kv.watermark_blocks() == 5);
  std::int64_t a = 0, b = 0;
  CHECK_FALSE(kv.grow(a, 16 * 96, /*keep_watermark=*/true));
  REQUIRE(kv.grow(a, 16 * 95, /*keep_watermark=*/true));
  // A running request may dip into the watermark.
  REQUIRE(kv.grow(b, 16 * 5));
  CHECK(kv.free_blocks() == 0);
  CHECK(kv.can_ever_fit(16 * 95));
  CHECK_FALSE(kv.can_ever_fit(16 * 95 + 1));
}

TEST_CASE("Prefix blocks are published, shared by reference and cached after release",
          "[kv_cache][prefix]") {
  KvCache kv(20, 16, 0.0);
  kv.set_prefix_caching(true);
  // Request A (group 7) computes 3 full prefix blocks of a 5-block prompt.
  std::int64_t a = 0, a_shared = 0;
  REQUIRE(kv.grow(a, 80));
  kv.publish_prefix(7, 3, a, a_shared);
  CHECK(a_shared == 3);
  CHECK(kv.used_blocks() == 5);  // publishing moves blocks, it does not copy them
  CHECK(kv.cached_prefix(7, 4) == 3);
  CHECK(kv.cached_prefix(8, 4) == 0);
  // Request B of the same group takes references: no new blocks for the prefix.
  std::int64_t b = 0, b_shared = 0;
  REQUIRE(kv.acquire_prefix(7, 3, b, b_shared, true));
  CHECK(kv.used_blocks() == 5);
  REQUIRE(kv.grow(b, 64));  // one private block for B's own tokens
  CHECK(b == 4);
  CHECK(kv.used_blocks() == 6);
  // A leaves: its 2 private blocks return; the shared ones stay in use by B.
  kv.release(a, a_shared, 7);
  CHECK(kv.used_blocks() == 4);
  CHECK(kv.cached_free_blocks() == 0);
  // B leaves: the prefix stays cached but free.
  kv.release(b, b_shared, 7);
  CHECK(kv.used_blocks() == 0);
  CHECK(kv.cached_free_blocks() == 3);
  CHECK(kv.free_blocks() == 20);
  CHECK(kv.cached_prefix(7, 3) == 3);
}

TEST_CASE("Cached free prefix blocks wait behind the never-used blocks and go tail first",
          "[kv_cache][prefix]") {
  KvCache kv(10, 16, 0.0);
  kv.set_prefix_caching(true);
  std::int64_t a = 0, a_shared = 0;
  REQUIRE(kv.grow(a, 64));
  kv.publish_prefix(1, 4, a, a_shared);
  kv.release(a, a_shared, 1);
  CHECK(kv.cached_free_blocks() == 4);
  std::int64_t b = 0;
  REQUIRE(kv.grow(b, 16 * 6));  // the 6 never-used blocks: nothing evicted
  CHECK(kv.prefix_evictions() == 0);
  CHECK(kv.cached_prefix(1, 4) == 4);
  REQUIRE(kv.grow(b, 16 * 7));  // one more: evicts the prefix's last block
  CHECK(kv.prefix_evictions() == 1);
  CHECK(kv.cached_prefix(1, 4) == 3);
  CHECK(kv.used_blocks() == 7);
  CHECK(kv.free_blocks() == 3);
}

TEST_CASE("Blocks freed after a cached prefix are taken after it, as in vLLM's one free queue",
          "[kv_cache][prefix]") {
  KvCache kv(10, 16, 0.0);
  kv.set_prefix_caching(true);
  std::int64_t a = 0, a_shared = 0, b = 0, c = 0;
  REQUIRE(kv.grow(a, 16 * 3));
  kv.publish_prefix(1, 2, a, a_shared);  // A: prefix blocks 0 and 1 of group 1, one private
  REQUIRE(kv.grow(b, 16 * 5));           // B: five private blocks; 2 never used
  kv.release(a, a_shared, 1);            // queue: 2 never used, A's tail, (1,1), (1,0)
  kv.release(b);                         // then B's 5
  CHECK(kv.free_blocks() == 10);
  CHECK(kv.cached_free_blocks() == 2);
  // Four blocks: the 3 plain ones at the head, then the prefix's last block, although B's five
  // (freed later) are free too.
  REQUIRE(kv.grow(c, 16 * 4));
  CHECK(kv.prefix_evictions() == 1);
  CHECK(kv.cached_prefix(1, 2) == 1);
  CHECK(kv.cached_free_blocks() == 1);
  REQUIRE(kv.grow(c, 16 * 10));  // everything: the prefix's head goes too
  CHECK(kv.prefix_evictions() == 2);
  CHECK(kv.cached_prefix(1, 2) == 0);
  kv.release(c);
  CHECK(kv.free_blocks() == 10);
}

TEST_CASE("A duplicate prefix computed in parallel stays private", "[kv_cache][prefix]") {
  KvCache kv(20, 16, 0.0);
  kv.set_prefix_caching(true);
  std::int64_t a = 0, as = 0, b = 0, bs = 0;
  REQUIRE(kv.grow(a, 48));
  REQUIRE(kv.grow(b, 48));
  kv.publish_prefix(3, 2, a, as);
  kv.publish_prefix(3, 2, b, bs);
  CHECK(as == 2);
  CHECK(bs == 0);
  CHECK(kv.used_blocks() == 6);
  kv.release(a, as, 3);
  kv.release(b, bs, 3);
  CHECK(kv.used_blocks() == 0);
  CHECK(kv.cached_free_blocks() == 2);
}
