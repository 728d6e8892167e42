#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/request.hpp"

namespace servesim {

// The prefix-aware router's replicas by their load terms: bucketed by outstanding requests o,
// and within a bucket ordered by the KV term t = kv_weight · (1 − KV use), highest first, then
// by id. A replica's score is prefix + queue(o) + t, so the best replica without a prefix hit
// heads some bucket, and there are as many buckets as distinct loads, not replicas.
class LoadBuckets {
 public:
  using Bucket = std::set<std::pair<double, ReplicaId>>;  // (−t, id)

  void clear(std::size_t fleet_size);
  // Adds replica `id` with load o and KV term t, or moves it there.
  void set(ReplicaId id, std::int64_t o, double t);
  bool member(ReplicaId id) const {
    return static_cast<std::size_t>(id) < member_.size() && member_[static_cast<std::size_t>(id)];
  }
  std::size_t size() const { return size_; }
  std::int64_t least() const { return buckets_.begin()->first; }
  std::int64_t most() const { return buckets_.rbegin()->first; }
  std::int64_t load(ReplicaId id) const { return o_[static_cast<std::size_t>(id)]; }
  double kv_term(ReplicaId id) const { return -negt_[static_cast<std::size_t>(id)]; }
  const std::map<std::int64_t, Bucket>& buckets() const { return buckets_; }

 private:
  std::map<std::int64_t, Bucket> buckets_;
  std::vector<std::int64_t> o_;
  std::vector<double> negt_;
  std::vector<char> member_;
  std::size_t size_ = 0;
};

// The replicas the router sent requests with each prefix key to: a prefix group, or a hash
// chain value at a recorded level (0 and the powers of two). Only a replica sent a request whose
// chain agrees at level j can hold a KV block of hash level j or deeper, so a replica missing from
// a level's list holds none of the prefix from that level on. Lists are sorted and only grow.
class SentPrefixes {
 public:
  static bool recorded_level(std::size_t j) { return (j & (j - 1)) == 0; }  // 0, 1, 2, 4, …
  void record(const RequestSpec& spec, ReplicaId to);
  // The replicas sent `key`; nullptr for none.
  const std::vector<ReplicaId>* sent(std::int64_t key) const {
    const auto it = sent_.find(key);
    return it == sent_.end() ? nullptr : &it->second;
  }

 private:
  void add(std::int64_t key, ReplicaId to);
  std::unordered_map<std::int64_t, std::vector<ReplicaId>> sent_;
};

}  // namespace servesim
