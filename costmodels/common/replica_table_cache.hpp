#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <tuple>

#include "sim/replica_spec.hpp"

namespace servesim {

// What a table-driven cost model precomputes per replica spec (its step tables), built once on
// first use and shared afterwards. Keyed by every ReplicaSpec field that can change a price; the
// GPU and model specs are keyed by address, so they must outlive the cache and not change (the
// catalog's do). Thread-safe: lookups share a lock, the first build of a key takes it exclusively.
template <class Prepared>
class ReplicaTableCache {
 public:
  // The entry for `r`, built by `build()` (returning std::unique_ptr<Prepared>) when missing.
  template <class Build>
  const Prepared& get(const ReplicaSpec& r, Build&& build) const {
    const Key key{r.gpu,
                  r.model,
                  r.tp,
                  r.pp,
                  static_cast<int>(r.weights),
                  r.kv_dtype_bytes,
                  r.cuda_graphs,
                  r.power_cap_w,
                  r.topology};  // "" resolves by the GPU, keyed above
    {
      std::shared_lock lock(mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return *it->second;
    }
    std::unique_lock lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return *it->second;
    return *cache_.emplace(key, build()).first->second;
  }

 private:
  using Key = std::tuple<const GpuSpec*, const ModelSpec*, int, int, int, double, bool, double,
                         std::string>;
  mutable std::shared_mutex mutex_;
  mutable std::map<Key, std::unique_ptr<const Prepared>> cache_;
};

}  // namespace servesim
