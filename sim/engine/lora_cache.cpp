#include "sim/engine/lora_cache.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace servesim {

LoraCache::LoraCache(const Options& options, std::vector<double> gpu_bytes,
                     std::vector<double> host_bytes)
    : o_(options), gpu_bytes_(std::move(gpu_bytes)), host_bytes_(std::move(host_bytes)) {
  if (o_.max_loras < 1 || o_.max_cpu_loras < o_.max_loras || gpu_bytes_.empty() ||
      gpu_bytes_.size() != host_bytes_.size() || o_.pcie_gb_per_s <= 0 || o_.disk_gb_per_s <= 0) {
    throw std::invalid_argument("LoraCache: bad options");
  }
  gpu_.reserve(static_cast<std::size_t>(o_.max_loras));
}

bool LoraCache::on_gpu(std::int32_t adapter) const {
  const auto it = host_.find(adapter);
  return it != host_.end() && it->second.on_gpu;
}

std::int32_t LoraCache::gpu_victim() const {
  std::int32_t victim = -1;
  std::int64_t oldest = 0;
  for (const std::int32_t a : gpu_) {
    const Entry& e = host_.at(a);
    if (e.pins == 0 && (victim < 0 || e.last_use < oldest)) {
      victim = a;
      oldest = e.last_use;
    }
  }
  return victim;
}

SimTime LoraCache::acquire(std::int32_t adapter) {
  const std::size_t kind = static_cast<std::size_t>(adapter) % gpu_bytes_.size();
  double ns = 0;
  auto it = host_.find(adapter);
  const bool resident = it != host_.end() && it->second.on_gpu;
  if (!resident && static_cast<std::int32_t>(gpu_.size()) >= o_.max_loras) {
    // Free a slot first: the adapter it held stays on the host, where it may be evicted next.
    const std::int32_t victim = gpu_victim();
    if (victim < 0) throw std::logic_error("LoraCache: acquire without a free slot");
    host_.at(victim).on_gpu = false;
    gpu_.erase(std::find(gpu_.begin(), gpu_.end(), victim));
  }
  if (it == host_.end()) {
    // Read from disk into the host cache, making room by its least recently used adapter that is
    // not on the GPU (there is one: the GPU holds fewer than max_loras ≤ max_cpu_loras now).
    if (static_cast<std::int32_t>(host_.size()) >= o_.max_cpu_loras) {
      auto victim = host_.end();
      for (auto h = host_.begin(); h != host_.end(); ++h) {
        if (!h->second.on_gpu &&
            (victim == host_.end() || h->second.last_use < victim->second.last_use ||
             (h->second.last_use == victim->second.last_use && h->first < victim->first))) {
          victim = h;
        }
      }
      if (victim == host_.end()) throw std::logic_error("LoraCache: host cache holds only GPU");
      host_.erase(victim);
    }
    it = host_.emplace(adapter, Entry{}).first;
    ns += host_bytes_[kind] / o_.disk_gb_per_s;
    ++s_.loads_from_disk;
  } else if (!resident) {
    ++s_.loads_from_cpu;
  }
  Entry& e = it->second;
  if (!e.on_gpu) {
    gpu_.push_back(adapter);
    e.on_gpu = true;
    ns += gpu_bytes_[kind] / o_.pcie_gb_per_s;
    s_.max_gpu = std::max(s_.max_gpu, static_cast<std::int32_t>(gpu_.size()));
  }
  ++e.pins;
  e.last_use = ++tick_;
  const auto load = static_cast<SimTime>(std::llround(ns));
  s_.load_ns += load;
  return load;
}

void LoraCache::release(std::int32_t adapter) {
  auto it = host_.find(adapter);
  if (it == host_.end() || it->second.pins <= 0) {
    throw std::logic_error("LoraCache: release of an adapter not pinned");
  }
  --it->second.pins;
}

void collect_lora_slices(const Batch& batch, std::vector<LoraSlice>& slices) {
  slices.clear();
  for (const BatchEntry& e : batch.entries) {
    const std::int32_t a = e.request->spec.adapter;
    if (a < 0) continue;
    auto it = std::find_if(slices.begin(), slices.end(),
                           [a](const LoraSlice& s) { return s.adapter == a; });
    if (it == slices.end()) {
      slices.push_back(LoraSlice{a, e.tokens});
    } else {
      it->tokens += e.tokens;
    }
  }
}

}  // namespace servesim
