#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/engine/batch.hpp"
#include "sim/engine/batch_shape.hpp"
#include "sim/engine/time.hpp"

namespace servesim {

// The LoRA adapters of one replica: `max_loras` GPU slots and a host-memory cache of
// `max_cpu_loras` adapters (vLLM's LRU caches of the same names). A running request pins its
// adapter's slot from admission until it finishes or is preempted; a request whose adapter is
// in no slot is admitted only when a slot is free or holds an adapter no running request pins
// (the least recently acquired of those is evicted), and its admission pays the load: the
// adapter's per-GPU bytes over PCIe (host→GPU, every GPU of the replica copying its shard at
// once), plus its whole bytes read from disk first when the host cache does not hold it.
// Loads are synchronous: the step that admits the request starts after them (vLLM loads an
// adapter before the forward pass that needs it).
// Invariants: adapters on the GPU ≤ max_loras; adapters on the host ≤ max_cpu_loras; every
// adapter on the GPU is on the host too; a pinned adapter stays on the GPU.
// Not thread-safe: one per replica per run.
class LoraCache {
 public:
  struct Options {
    std::int32_t max_loras = 1;
    std::int32_t max_cpu_loras = 1;
    double pcie_gb_per_s = 1;  // host→GPU, per GPU (= bytes per ns)
    double disk_gb_per_s = 1;  // disk→host
  };
  // `gpu_bytes[i]` / `host_bytes[i]`: the per-GPU shard and the whole adapter of rank entry i;
  // adapter a uses entry a mod size (LoraConfig::ranks given in turn).
  LoraCache(const Options& options, std::vector<double> gpu_bytes, std::vector<double> host_bytes);

  // Whether a request on `adapter` (≥ 0) could be admitted now.
  bool can_acquire(std::int32_t adapter) const { return on_gpu(adapter) || has_slot(); }
  // Whether a slot is free or holds an adapter no running request pins.
  bool has_slot() const {
    return static_cast<std::int32_t>(gpu_.size()) < o_.max_loras || gpu_victim() >= 0;
  }
  // Pins `adapter` for one more running request (can_acquire must hold); returns the time its
  // load takes (0 when it was on the GPU already).
  SimTime acquire(std::int32_t adapter);
  // Unpins `adapter` for one request that finished or was preempted; it stays on the GPU.
  void release(std::int32_t adapter);
  bool on_gpu(std::int32_t adapter) const;
  std::int32_t max_loras() const { return o_.max_loras; }
  std::int32_t gpu_adapters() const { return static_cast<std::int32_t>(gpu_.size()); }

  // Called by the engine for every step that holds `distinct` adapters.
  void record_step(std::int32_t distinct) {
    ++s_.steps;
    s_.distinct_sum += distinct;
    if (distinct > s_.max_distinct) s_.max_distinct = distinct;
  }
  struct Stats {
    std::int64_t loads_from_cpu = 0;
    std::int64_t loads_from_disk = 0;
    SimTime load_ns = 0;
    std::int64_t steps = 0;         // every step of the replica
    std::int64_t distinct_sum = 0;  // Σ distinct adapters over those steps
    std::int32_t max_distinct = 0;  // most distinct adapters in one step
    std::int32_t max_gpu = 0;       // most adapters on the GPU at once
  };
  const Stats& stats() const { return s_; }

 private:
  struct Entry {
    std::int32_t pins = 0;
    std::int64_t last_use = 0;
    bool on_gpu = false;
  };
  // The unpinned GPU adapter acquired longest ago, or -1.
  std::int32_t gpu_victim() const;

  Options o_;
  std::vector<double> gpu_bytes_;
  std::vector<double> host_bytes_;
  std::unordered_map<std::int32_t, Entry> host_;  // adapters on the host (a superset of gpu_)
  std::vector<std::int32_t> gpu_;                 // adapters on the GPU
  std::int64_t tick_ = 0;
  Stats s_;
};

// The distinct adapters of `batch` with their tokens, in order of first appearance (base-model
// requests left out), into `slices` (cleared first).
void collect_lora_slices(const Batch& batch, std::vector<LoraSlice>& slices);

}  // namespace servesim
