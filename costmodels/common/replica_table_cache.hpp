#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <tuple>

#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// What a table-driven cost model precomputes per replica spec (its step tables), built once on
// first use and shared afterwards. Keyed by every ReplicaSpec field that can change a price; the
// GPU and model specs are keyed by address, so they must outlive the cache and not change (the
// catalog's do). Thread-safe: lookups share a lock, the first build of a key takes it exclusively.
// Each thread also remembers the entry it got last (a run asks for the same replica every step),
// so concurrent runs (a sweep's points) do not meet on the lock at every step.
template <class Prepared>
class ReplicaTableCache {
 public:
  ReplicaTableCache() : id_(next_id()) {}

  // The entry for `r`, built by `build()` (returning std::unique_ptr<Prepared>) when missing.
  template <class Build>
  const Prepared& get(const ReplicaSpec& r, Build&& build) const {
    // Ids are never reused, so a memo of a destroyed cache never matches a new one; entries are
    // never erased, so a memo of this cache points at live nodes. Plain pointers: the memo is
    // constant-initialized, with no guard to test on every call.
    thread_local Memo memo;
    if (memo.cache == id_ && same(*memo.key, r)) return *memo.entry;
    const auto& node = find_or_build(r, std::forward<Build>(build));
    memo = {id_, &node.first, node.second.get()};
    return *node.second;
  }

 private:
  using Key = std::tuple<const GpuSpec*, const ModelSpec*, int, int, int, double, bool, double,
                         std::string, decltype(ClusterSpec{}.fields()), int, int>;
  using Map = std::map<Key, std::unique_ptr<const Prepared>>;
  struct Memo {
    std::uint64_t cache = 0;
    const Key* key = nullptr;
    const Prepared* entry = nullptr;
  };

  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> last{0};
    return ++last;
  }
  static Key key_of(const ReplicaSpec& r) {
    return Key{r.gpu,
               r.model,
               r.tp,
               r.pp,
               static_cast<int>(r.weights),
               r.kv_dtype_bytes,
               r.cuda_graphs,
               r.power_cap_w,
               r.topology,  // "" resolves by the GPU, keyed above
               cluster_fields(r),
               r.attention_dp,
               r.moe_ep};
  }
  // The cluster prices only pipeline hand-offs here: replicas of one stage share a table
  // whatever their cluster (a sweep over KV links rebuilds nothing).
  static decltype(ClusterSpec{}.fields()) cluster_fields(const ReplicaSpec& r) {
    return r.pp > 1 ? r.cluster.fields() : ClusterSpec{}.fields();
  }
  // key == key_of(r), without building a key (with one stage, equal pp means equal cluster
  // fields: both are the default's).
  static bool same(const Key& k, const ReplicaSpec& r) {
    return std::get<0>(k) == r.gpu && std::get<1>(k) == r.model && std::get<2>(k) == r.tp &&
           std::get<3>(k) == r.pp && std::get<4>(k) == static_cast<int>(r.weights) &&
           std::get<5>(k) == r.kv_dtype_bytes && std::get<6>(k) == r.cuda_graphs &&
           std::get<7>(k) == r.power_cap_w && std::get<8>(k) == r.topology &&
           (r.pp <= 1 || std::get<9>(k) == r.cluster.fields()) &&
           std::get<10>(k) == r.attention_dp && std::get<11>(k) == r.moe_ep;
  }

  // The map's node for `r` (key and entry), built when missing.
  template <class Build>
  const typename Map::value_type& find_or_build(const ReplicaSpec& r, Build&& build) const {
    const Key key = key_of(r);
    {
      std::shared_lock lock(mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return *it;
    }
    std::unique_lock lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return *it;
    return *cache_.emplace(key, build()).first;
  }

  std::uint64_t id_;
  mutable std::shared_mutex mutex_;
  mutable Map cache_;
};

}  // namespace servesim
