#include "sim/engine/kv_offload.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace servesim {

KvOffload::KvOffload(std::int64_t capacity_blocks, double block_bytes, double block_ns,
                     bool overlap)
    : capacity_(capacity_blocks),
      block_bytes_(block_bytes),
      block_ns_(block_ns),
      overlap_(overlap) {
  if (capacity_blocks < 0 || !(block_bytes > 0) || !(block_ns >= 0)) {
    throw std::invalid_argument("KvOffload needs a capacity ≥ 0, block bytes > 0 and time ≥ 0");
  }
}

SimTime KvOffload::block_time(std::int64_t blocks) const {
  return static_cast<SimTime>(std::llround(static_cast<double>(blocks) * block_ns_));
}

void KvOffload::add_resident(std::int64_t blocks) {
  resident_ += blocks;
  stored_ += blocks;
  peak_ = std::max(peak_, resident_);
}

bool KvOffload::make_room(std::int64_t blocks) {
  if (swapped_ + blocks > capacity_) return false;
  while (resident_ + blocks > capacity_) {
    lru_index_.erase(lru_.front());
    lru_.pop_front();
    --resident_;
    ++dropped_;
  }
  return true;
}

void KvOffload::store_cached(const Key& key) {
  if (auto it = lru_index_.find(key); it != lru_index_.end()) {
    lru_.splice(lru_.end(), lru_, it->second);  // the copy here is still valid: no bytes move
    return;
  }
  if (!make_room(1)) return;
  lru_index_.emplace(key, lru_.insert(lru_.end(), key));
  add_resident(1);
}

void KvOffload::load_cached(const Key& key) {
  auto it = lru_index_.find(key);
  if (it == lru_index_.end()) throw std::logic_error("KvOffload: load of a block not held");
  lru_.splice(lru_.end(), lru_, it->second);
  ++pending_load_;
  ++loaded_;
  ++cpu_hits_;
}

bool KvOffload::swap_out(std::int64_t request, std::int64_t blocks) {
  if (blocks <= 0 || !make_room(blocks)) return false;
  swaps_[request] += blocks;
  swapped_ += blocks;
  add_resident(blocks);
  ++swaps_out_;
  return true;
}

std::int64_t KvOffload::swap_in(std::int64_t request) {
  auto it = swaps_.find(request);
  if (it == swaps_.end()) return 0;
  const std::int64_t blocks = it->second;
  swaps_.erase(it);
  swapped_ -= blocks;
  resident_ -= blocks;
  swapped_in_blocks_ += blocks;
  pending_load_ += blocks;
  loaded_ += blocks;
  ++swaps_in_;
  return blocks;
}

SimTime KvOffload::take_load_ns() {
  const SimTime t = block_time(pending_load_);
  pending_load_ = 0;
  load_ns_total_ += t;
  return t;
}

}  // namespace servesim
