#pragma once

#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/kv_offload.hpp"
#include "sim/engine/request.hpp"
#include "sim/util/splitmix.hpp"

namespace servesim {

// Paged KV-cache block accounting for one replica. Blocks are counted, not addressed; each request
// keeps its own count (`held`, passed by reference) so grow and release stay O(1).
//
// With prefix caching on (vLLM's automatic prefix caching at block granularity), the full blocks
// of a shared prefix are identified by (prefix group, block index). A request that computed such
// a block publishes it; later requests of the group take references instead of recomputing. A
// block whose last reference goes stays cached but free (evictable) until an allocation needs it.
// As in vLLM V1's BlockPool, every free block, cached or not, waits in one queue in the order it
// was freed (a request's blocks tail first); an allocation takes blocks from its head, evicting a
// cached block it takes, so a prefix freed long ago goes before blocks freed after it.
// Invariants: 0 ≤ used ≤ total; used == Σ private blocks + shared blocks with references;
// free == total − used == the blocks in the free queue, cached-but-free ones included.
// Which cached block holds block i of one request's sequence: its workload group's shared prefix
// for i < group_blocks, else its own content (vLLM hashes every full block, so a preempted
// request finds its own surviving blocks when it resumes). Ids: a group is ≥ 0, a request's own
// content is own_id(request) ≤ −2 (so the two never collide), kNone (−1) means no key. A bare
// group id converts to "that group's prefix, nothing own".
// A request carrying block hashes (RequestSpec::hashes) keys its first hashed_blocks blocks by
// its hash chain instead: block i is (chain[j], i) with j the hash block holding the block's last
// token, so two requests share block i exactly when their hash ids agree up to that token's hash
// block (with 512-token hash blocks and block size bs, hash block j covers blocks
// [j·512/bs, (j+1)·512/bs)). hashed_blocks is 0 for every other request.
struct BlockKeys {
  static constexpr std::int64_t kNone = -1;
  static std::int64_t own_id(std::int64_t request_id) { return -2 - request_id; }

  std::int64_t group = kNone;
  std::int64_t group_blocks = 0;
  std::int64_t own = kNone;
  BlockKeys() = default;
  BlockKeys(std::int64_t g)  // NOLINT(google-explicit-constructor): a group is its keys
      : group(g >= 0 ? g : kNone),
        group_blocks(g >= 0 ? std::numeric_limits<std::int64_t>::max() : 0) {}
  BlockKeys(std::int64_t g, std::int64_t g_blocks, std::int64_t own_key)
      : group(g >= 0 ? g : kNone), group_blocks(g >= 0 ? g_blocks : 0), own(own_key) {}
  std::shared_ptr<const PrefixHashes> hashes;
  std::int64_t hashed_blocks = 0;
  std::int32_t block_size = 0;  // of the KV cache the keys are for (set with hashes)
  // Keys for a hashed prompt: its first `hashed_tokens` tokens by `h`, then its own content.
  static BlockKeys hashed(std::shared_ptr<const PrefixHashes> h, std::int64_t hashed_tokens,
                          std::int32_t bs, std::int64_t own_key) {
    BlockKeys k(kNone, 0, own_key);
    k.hashed_blocks = hashed_tokens / bs;
    k.block_size = bs;
    k.hashes = std::move(h);
    return k;
  }
  // (id, i); the id is kNone when block i has no key.
  std::pair<std::int64_t, std::int64_t> at(std::int64_t i) const {
    if (i < hashed_blocks) {
      const std::int64_t last_token = (i + 1) * block_size - 1;
      return {hashes->chain[static_cast<std::size_t>(last_token / hashes->block_tokens)], i};
    }
    return {i < group_blocks ? group : own, i};
  }
};

class KvCache {
 public:
  KvCache(std::int64_t total_blocks, std::int32_t block_size, double watermark);

  std::int64_t total_blocks() const { return total_; }
  std::int64_t used_blocks() const { return used_; }
  std::int64_t free_blocks() const { return total_ - used_; }
  std::int32_t block_size() const { return block_size_; }
  std::int64_t watermark_blocks() const { return watermark_blocks_; }

  std::int64_t blocks_for_tokens(std::int64_t tokens) const {
    return (tokens + block_size_ - 1) / block_size_;
  }
  // Extra blocks a holder of `held` blocks needs to hold `tokens` tokens.
  std::int64_t extra_for(std::int64_t held, std::int64_t tokens) const;
  // Grows `held` to cover `tokens`; false (and no change) when blocks are short. With
  // `keep_watermark`, refuses when fewer than the watermark would stay free (new admissions).
  // Inline: every decode of every step asks, and most stay within the blocks they hold.
  bool grow(std::int64_t& held, std::int64_t tokens, bool keep_watermark = false) {
    return tokens <= held * block_size_ || grow_more(held, tokens, keep_watermark);
  }
  // Frees every block of a holder; `held` becomes 0.
  void release(std::int64_t& held);
  // Frees a holder's trailing private blocks beyond those `tokens` need (rejected speculative
  // tokens); `tokens` must cover its shared prefix blocks.
  void shrink(std::int64_t& held, std::int64_t tokens);
  // A request of `tokens` total could ever fit (empty cache, watermark kept).
  bool can_ever_fit(std::int64_t tokens) const;

  // --- prefix caching (no-ops while disabled) ---
  void set_prefix_caching(bool on) { prefix_caching_ = on; }
  bool prefix_caching() const { return prefix_caching_; }
  // Leading blocks of a sequence (`keys`) that are cached (in use or free), at most `max_blocks`.
  std::int64_t cached_prefix(const BlockKeys& keys, std::int64_t max_blocks) const;
  // Whether a request holding `held` blocks could take references on the first `hits` cached
  // blocks of `keys` and then grow to cover `tokens` (acquire_prefix, then grow) without digging
  // into the watermark (`keep_watermark`). Changes nothing.
  bool can_admit(const BlockKeys& keys, std::int64_t hits, std::int64_t held, std::int64_t tokens,
                 bool keep_watermark) const;
  // Takes references on the first `n` (cached) blocks of `keys` for a request holding nothing:
  // held = shared = n. False (and no change) when that would dig into the watermark.
  bool acquire_prefix(const BlockKeys& keys, std::int64_t n, std::int64_t& held,
                      std::int64_t& shared, bool keep_watermark);
  // The request's first `computed_blocks` blocks are computed: publishes its private blocks
  // [shared, computed_blocks) as cached shared blocks (stops at a block without a key, or one
  // another request already published: the request keeps its duplicate private).
  void publish_prefix(const BlockKeys& keys, std::int64_t computed_blocks, std::int64_t& held,
                      std::int64_t& shared);
  // Frees a request's blocks: private ones return to the pool, shared ones lose a reference.
  void release(std::int64_t& held, std::int64_t& shared, const BlockKeys& keys);
  // Statistics of admissions: prefix blocks looked up and found.
  void record_prefix_lookup(std::int64_t queried, std::int64_t hit) {
    query_blocks_ += queried;
    hit_blocks_ += hit;
  }
  std::int64_t cached_free_blocks() const { return cached_free_; }
  std::int64_t prefix_hit_blocks() const { return hit_blocks_; }
  std::int64_t prefix_query_blocks() const { return query_blocks_; }
  std::int64_t prefix_evictions() const { return evictions_; }
  // Appends the id of every cached block (in use or free) whose index is a multiple of `stride`
  // to `ids`, in no particular order: a router's summary of what this cache holds (BlockKeys
  // says what the ids mean). O(cached blocks).
  void append_cached_ids(std::vector<std::int64_t>& ids, std::int64_t stride) const;

  // --- CPU tier (none by default; set on a replica's own cache before its run) ---
  // With prefix caching, a cached block the GPU evicts is copied to the tier, and a lookup that
  // misses the GPU continues there (cached_prefix counts the blocks of both tiers; can_admit and
  // acquire_prefix take a fresh GPU block for each one loaded from the CPU). Without prefix
  // caching the schedulers swap preempted requests through it (SchedulerBase::preempt).
  void set_offload(std::shared_ptr<KvOffload> tier) { offload_ = std::move(tier); }
  KvOffload* offload() const { return offload_.get(); }

 private:
  std::int64_t total_;
  std::int32_t block_size_;
  std::int64_t watermark_blocks_;
  // grow's slow path: `held` covers fewer than `tokens`.
  bool grow_more(std::int64_t& held, std::int64_t tokens, bool keep_watermark);
  // Makes room for `blocks` new private blocks by evicting cached-free blocks if needed.
  void take(std::int64_t blocks);
  void evict_one();

  std::int64_t used_ = 0;

  using Key = std::pair<std::int64_t, std::int64_t>;  // (group, block index)
  // splitmix64 finaliser of the two ids; iterated only by append_cached_ids, whose callers must
  // not depend on the order.
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return static_cast<std::size_t>(
          mix64(static_cast<std::uint64_t>(k.first), static_cast<std::uint64_t>(k.second)));
    }
  };
  // A stretch of the free queue: `count` blocks without identity, or one cached block.
  struct FreeRun {
    std::int64_t count = 0;
    bool cached = false;
    Key key{};
  };
  struct Entry {
    std::int32_t refs = 0;
    std::list<FreeRun>::iterator free_at;  // its place in the free queue, valid when refs == 0
  };
  // Appends `n` blocks without identity to the free queue.
  void free_plain(std::int64_t n);

  bool prefix_caching_ = false;
  std::unordered_map<Key, Entry, KeyHash> cached_;  // (group, block) -> entry
  std::list<FreeRun> free_;                         // every free block, least recently freed first
  std::int64_t cached_free_ = 0;
  std::int64_t hit_blocks_ = 0;
  std::int64_t query_blocks_ = 0;
  std::int64_t evictions_ = 0;
  std::shared_ptr<KvOffload> offload_;
};

}  // namespace servesim
