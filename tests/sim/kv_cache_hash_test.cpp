#include <algorithm>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine/kv_cache.hpp"

using namespace servesim;

namespace kv_hash_test {

// Hashes whose chain values are given directly (a trace reader would hash the ids together).
std::shared_ptr<const PrefixHashes> chain_of(std::int32_t block_tokens,
                                             std::vector<std::int64_t> chain) {
  auto h = std::make_shared<PrefixHashes>();
  h->block_tokens = block_tokens;
  for (std::int64_t& v : chain) v += std::int64_t{1} << 62;
  h->chain = std::move(chain);
  return h;
}

TEST_CASE("requests share exactly the KV blocks whose hash chains agree", "[kv_cache][prefix]") {
  KvCache kv(64, 16, 0.0);
  kv.set_prefix_caching(true);
  // 64-token hash blocks over 16-token KV blocks: hash block j covers KV blocks [4j, 4j + 4).
  const BlockKeys a = BlockKeys::hashed(chain_of(64, {1, 2, 3}), 192, 16, BlockKeys::own_id(0));
  const BlockKeys b = BlockKeys::hashed(chain_of(64, {1, 2, 4}), 192, 16, BlockKeys::own_id(1));
  const BlockKeys c = BlockKeys::hashed(chain_of(64, {5, 2, 3}), 192, 16, BlockKeys::own_id(2));
  CHECK(a.at(7).first == b.at(7).first);          // hash block 1
  CHECK(a.at(8).first != b.at(8).first);          // hash block 2 differs
  CHECK(a.at(12).first == BlockKeys::own_id(0));  // past the hashed tokens: own content

  std::int64_t ha = 0, sa = 0;
  REQUIRE(kv.grow(ha, 200));
  kv.publish_prefix(a, 12, ha, sa);
  CHECK(sa == 12);
  CHECK(kv.used_blocks() == 13);

  // B agrees on its first two hash blocks: exactly 8 KV blocks, and no more however far it asks.
  CHECK(kv.cached_prefix(b, 12) == 8);
  CHECK(kv.cached_prefix(b, 5) == 5);
  // C's first hash differs, so its later blocks (equal ids after a different start) are misses.
  CHECK(kv.cached_prefix(c, 12) == 0);

  std::int64_t hb = 0, sb = 0;
  REQUIRE(kv.acquire_prefix(b, 8, hb, sb, false));
  CHECK(kv.used_blocks() == 13);  // references, not copies
  REQUIRE(kv.grow(hb, 200));
  CHECK(kv.used_blocks() == 13 + 5);  // its own 5 blocks past the shared 8
  kv.publish_prefix(b, 12, hb, sb);
  CHECK(sb == 12);  // its hash block 2 is new: published beside A's

  kv.release(ha, sa, a);
  kv.release(hb, sb, b);
  CHECK(kv.used_blocks() == 0);
  CHECK(kv.cached_free_blocks() == 16);  // 8 shared + 4 of A's third block + 4 of B's
  CHECK(kv.cached_prefix(a, 12) == 12);
  CHECK(kv.cached_prefix(b, 12) == 12);
}

TEST_CASE("a KV block straddling two hash blocks is keyed by the later one", "[kv_cache][prefix]") {
  // 24-token KV blocks over 64-token hash blocks: block 2 holds tokens 48–71, into hash block 1.
  const BlockKeys a = BlockKeys::hashed(chain_of(64, {1, 2}), 128, 24, BlockKeys::kNone);
  const BlockKeys b = BlockKeys::hashed(chain_of(64, {1, 9}), 128, 24, BlockKeys::kNone);
  CHECK(a.hashed_blocks == 5);
  CHECK(a.at(1).first == b.at(1).first);
  CHECK(a.at(2).first != b.at(2).first);
  KvCache kv(32, 24, 0.0);
  kv.set_prefix_caching(true);
  std::int64_t h = 0, s = 0;
  REQUIRE(kv.grow(h, 128));
  kv.publish_prefix(a, 5, h, s);
  CHECK(kv.cached_prefix(b, 5) == 2);
}

TEST_CASE("a router's summary lists the cached ids at a stride", "[kv_cache][prefix]") {
  KvCache kv(64, 16, 0.0);
  kv.set_prefix_caching(true);
  const BlockKeys a = BlockKeys::hashed(chain_of(64, {1, 2}), 128, 16, BlockKeys::kNone);
  std::int64_t h = 0, s = 0;
  REQUIRE(kv.grow(h, 128));
  kv.publish_prefix(a, 8, h, s);
  std::vector<std::int64_t> ids;
  kv.append_cached_ids(ids, 4);
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<std::int64_t>{a.at(0).first, a.at(4).first});
  ids.clear();
  kv.append_cached_ids(ids, 1);
  CHECK(ids.size() == 8);
}

}  // namespace kv_hash_test
