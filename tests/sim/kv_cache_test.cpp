#include "sim/kv_cache.hpp"

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
