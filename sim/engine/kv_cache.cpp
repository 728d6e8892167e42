#include "sim/engine/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace servesim {

KvCache::KvCache(std::int64_t total_blocks, std::int32_t block_size, double watermark)
    : total_(total_blocks),
      block_size_(block_size),
      watermark_blocks_(
          static_cast<std::int64_t>(std::floor(watermark * static_cast<double>(total_blocks)))) {
  if (total_blocks <= 0 || block_size <= 0) {
    throw std::invalid_argument("KvCache needs positive block count and size");
  }
  free_plain(total_blocks);
}

void KvCache::free_plain(std::int64_t n) {
  if (n <= 0) return;
  if (!free_.empty() && !free_.back().cached) {
    free_.back().count += n;
  } else {
    free_.push_back(FreeRun{n, false, {}});
  }
}

std::int64_t KvCache::extra_for(std::int64_t held, std::int64_t tokens) const {
  const std::int64_t need = blocks_for_tokens(tokens);
  return need > held ? need - held : 0;
}

bool KvCache::grow_more(std::int64_t& held, std::int64_t tokens, bool keep_watermark) {
  const std::int64_t extra = extra_for(held, tokens);
  if (extra == 0) return true;
  const std::int64_t reserve = keep_watermark ? watermark_blocks_ : 0;
  if (free_blocks() - extra < reserve) return false;
  take(extra);
  held += extra;
  return true;
}

void KvCache::take(std::int64_t blocks) {
  // From the head of the free queue; a cached block taken there is evicted.
  used_ += blocks;
  while (blocks > 0) {
    FreeRun& head = free_.front();
    if (head.cached) {
      evict_one();
      --blocks;
      continue;
    }
    const std::int64_t n = std::min(head.count, blocks);
    head.count -= n;
    blocks -= n;
    if (head.count == 0) free_.pop_front();
  }
}

void KvCache::evict_one() {
  if (offload_) offload_->store_cached(free_.front().key);
  cached_.erase(free_.front().key);
  free_.pop_front();
  --cached_free_;
  ++evictions_;
}

std::int64_t KvCache::cached_prefix(const BlockKeys& keys, std::int64_t max_blocks) const {
  if (!prefix_caching_) return 0;
  std::int64_t n = 0;
  while (n < max_blocks && keys.at(n).first != BlockKeys::kNone && cached_.count(keys.at(n))) ++n;
  if (offload_) {
    // The lookup goes on where the GPU missed: a block may be on either tier. Out of line (as the
    // other CPU-tier paths below), so that the GPU lookups of a run without a tier stay inlined.
    n = [ this, &keys, max_blocks ](std::int64_t m) __attribute__((noinline)) {
      while (m < max_blocks && keys.at(m).first != BlockKeys::kNone &&
             (offload_->holds(keys.at(m)) || cached_.count(keys.at(m)))) {
        ++m;
      }
      return m;
    }
    (n);
  }
  return n;
}

bool KvCache::can_admit(const BlockKeys& keys, std::int64_t hits, std::int64_t held,
                        std::int64_t tokens, bool keep_watermark) const {
  std::int64_t revived = 0;  // free cached blocks that would become used again
  if (!offload_) {
    for (std::int64_t i = 0; i < hits; ++i) revived += cached_.at(keys.at(i)).refs == 0;
  } else {
    // And a fresh block for each copy only the CPU tier holds.
    revived = [ this, &keys, hits ]() __attribute__((noinline)) {
      std::int64_t r = 0;
      for (std::int64_t i = 0; i < hits; ++i) {
        const auto it = cached_.find(keys.at(i));
        r += it == cached_.end() || it->second.refs == 0;
      }
      return r;
    }
    ();
  }
  const std::int64_t extra = extra_for(held + hits, tokens);
  const std::int64_t reserve = keep_watermark ? watermark_blocks_ : 0;
  return free_blocks() - revived - extra >= reserve;
}

bool KvCache::acquire_prefix(const BlockKeys& keys, std::int64_t n, std::int64_t& held,
                             std::int64_t& shared, bool keep_watermark) {
  if (n <= 0) return true;
  if (!can_admit(keys, n, 0, 0, keep_watermark)) return false;  // the revived blocks alone
  if (offload_) {
    [ this, &keys, n ]() __attribute__((noinline)) {
      std::int64_t loads = 0;  // blocks only the CPU tier holds
      for (std::int64_t i = 0; i < n; ++i) {
        const auto it = cached_.find(keys.at(i));
        if (it == cached_.end()) {
          offload_->load_cached(keys.at(i));
          ++loads;
          continue;
        }
        Entry& e = it->second;
        if (e.refs++ == 0) {
          free_.erase(e.free_at);
          --cached_free_;
          ++used_;
        }
      }
      if (loads == 0) return;
      // Fresh blocks for the loaded copies; take() evicts only free blocks, and every block of
      // this prefix already holds a reference.
      take(loads);
      for (std::int64_t i = 0; i < n; ++i) {
        auto [it, inserted] = cached_.try_emplace(keys.at(i));
        if (inserted) it->second.refs = 1;
      }
    }
    ();
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      Entry& e = cached_.at(keys.at(i));
      if (e.refs++ == 0) {
        free_.erase(e.free_at);
        --cached_free_;
        ++used_;
      }
    }
  }
  held = n;
  shared = n;
  return true;
}

void KvCache::publish_prefix(const BlockKeys& keys, std::int64_t computed_blocks,
                             std::int64_t& held, std::int64_t& shared) {
  if (!prefix_caching_) return;
  while (shared < computed_blocks && shared < held && keys.at(shared).first != BlockKeys::kNone) {
    auto [it, inserted] = cached_.try_emplace(keys.at(shared));
    if (!inserted) return;  // someone else's copy is cached: keep ours private from here on
    it->second.refs = 1;    // the block moves from this request's private to shared, still used
    ++shared;
  }
}

void KvCache::release(std::int64_t& held, std::int64_t& shared, const BlockKeys& keys) {
  // A request's blocks are freed tail first (as vLLM does), so its private tail blocks and then
  // the prefix from its end are evicted before the prefix's head.
  used_ -= held - shared;
  free_plain(held - shared);
  for (std::int64_t i = shared - 1; i >= 0; --i) {
    Entry& e = cached_.at(keys.at(i));
    if (--e.refs == 0) {
      e.free_at = free_.insert(free_.end(), FreeRun{1, true, keys.at(i)});
      ++cached_free_;
      --used_;
    }
  }
  held = 0;
  shared = 0;
}

void KvCache::release(std::int64_t& held) {
  used_ -= held;
  free_plain(held);
  held = 0;
}

void KvCache::shrink(std::int64_t& held, std::int64_t tokens) {
  const std::int64_t extra = held - blocks_for_tokens(tokens);
  if (extra <= 0) return;
  used_ -= extra;
  free_plain(extra);
  held -= extra;
}

void KvCache::append_cached_ids(std::vector<std::int64_t>& ids, std::int64_t stride) const {
  for (const auto& entry : cached_) {
    if (entry.first.second % stride == 0) ids.push_back(entry.first.first);
  }
}

bool KvCache::can_ever_fit(std::int64_t tokens) const {
  return blocks_for_tokens(tokens) <= total_ - watermark_blocks_;
}

}  // namespace servesim
