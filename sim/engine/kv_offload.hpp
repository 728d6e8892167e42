#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>

#include "sim/engine/time.hpp"
#include "sim/util/splitmix.hpp"

namespace servesim {

// The host-memory (CPU) KV tier of one replica, behind its GPU KvCache. Blocks are counted by
// key, not addressed. It holds two kinds of blocks, which one run never mixes:
// - with prefix caching on, copies of cached blocks the GPU evicted, keyed as the GPU cache keys
//   them (BlockKeys), in LRU order: a store of a block already here only refreshes it; a load
//   copies a block back and keeps it here (the CPU copy stays valid);
// - with prefix caching off, the blocks of preempted requests (swap), per request: swapped in,
//   they leave the tier.
// Swapped blocks are never dropped; cached copies are dropped least recently used first to make
// room. A swap that finds no room even then is refused (the scheduler recomputes instead).
//
// Pricing: a block is `block_bytes` over the replica's GPUs and moves as one shard per GPU over
// each GPU's own host link in parallel, `block_ns` per block and direction. Loads (host→device)
// that a step needs are added to that step (take_load_ns); stores (device→host) run in the
// background and only occupy the device→host link (store_busy_ns), never a step.
// Invariant (byte identity): stored_blocks − dropped_blocks − swapped_in_blocks == resident.
// Not thread-safe.
class KvOffload {
 public:
  using Key = std::pair<std::int64_t, std::int64_t>;  // a BlockKeys (id, block index)

  KvOffload(std::int64_t capacity_blocks, double block_bytes, double block_ns, bool overlap);

  std::int64_t capacity_blocks() const { return capacity_; }
  std::int64_t resident_blocks() const { return resident_; }
  double block_bytes() const { return block_bytes_; }
  bool overlap() const { return overlap_; }

  // --- prefix tier ---
  // A cached block the GPU evicts: copied here (or refreshed, if a copy is here already). When
  // every resident block is swapped the copy is not kept (and not counted as stored).
  void store_cached(const Key& key);
  bool holds(const Key& key) const { return lru_index_.count(key) != 0; }
  // Copies a block held here back to the GPU for the step being formed: a CPU hit.
  void load_cached(const Key& key);

  // --- swap ---
  // Moves a preempted request's `blocks` here; false (nothing changed) without room.
  bool swap_out(std::int64_t request, std::int64_t blocks);
  // Brings a swapped request's blocks back for the step being formed; 0 if it has none here.
  std::int64_t swap_in(std::int64_t request);
  // A preemption that recomputes although the tier is on (no room, or its blocks not all kept).
  void count_recompute() { ++recomputes_; }

  // The load time of the blocks loaded since the last call (the step being formed), and resets
  // it. Called once per step by the engine.
  SimTime take_load_ns();

  // Statistics over the run.
  std::int64_t stored_blocks() const { return stored_; }
  std::int64_t loaded_blocks() const { return loaded_; }
  std::int64_t dropped_blocks() const { return dropped_; }
  std::int64_t swapped_in_blocks() const { return swapped_in_blocks_; }
  std::int64_t cpu_hit_blocks() const { return cpu_hits_; }
  std::int64_t swaps_out() const { return swaps_out_; }
  std::int64_t swaps_in() const { return swaps_in_; }
  std::int64_t recomputes() const { return recomputes_; }
  std::int64_t peak_blocks() const { return peak_; }
  SimTime load_ns_total() const { return load_ns_total_; }
  SimTime store_busy_ns() const { return block_time(stored_); }

 private:
  SimTime block_time(std::int64_t blocks) const;
  // Drops least recently used cached copies until `blocks` more fit; false if they cannot.
  bool make_room(std::int64_t blocks);
  void add_resident(std::int64_t blocks);

  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return static_cast<std::size_t>(
          mix64(static_cast<std::uint64_t>(k.first), static_cast<std::uint64_t>(k.second)));
    }
  };

  std::int64_t capacity_;
  double block_bytes_;
  double block_ns_;
  bool overlap_;
  std::int64_t resident_ = 0;  // cached copies + swapped blocks
  std::int64_t swapped_ = 0;
  std::list<Key> lru_;  // cached copies, least recently used first
  std::unordered_map<Key, std::list<Key>::iterator, KeyHash> lru_index_;
  std::unordered_map<std::int64_t, std::int64_t> swaps_;  // request -> its swapped blocks
  std::int64_t pending_load_ = 0;                         // blocks loaded for the step being formed

  std::int64_t stored_ = 0;
  std::int64_t loaded_ = 0;
  std::int64_t dropped_ = 0;
  std::int64_t swapped_in_blocks_ = 0;
  std::int64_t cpu_hits_ = 0;
  std::int64_t swaps_out_ = 0;
  std::int64_t swaps_in_ = 0;
  std::int64_t recomputes_ = 0;
  std::int64_t peak_ = 0;
  SimTime load_ns_total_ = 0;
};

}  // namespace servesim
