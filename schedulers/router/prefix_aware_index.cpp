#include "schedulers/router/prefix_aware_index.hpp"

#include <algorithm>

namespace servesim {

void LoadBuckets::clear(std::size_t fleet_size) {
  buckets_.clear();
  o_.assign(fleet_size, 0);
  negt_.assign(fleet_size, 0.0);
  member_.assign(fleet_size, 0);
  size_ = 0;
}

void LoadBuckets::set(ReplicaId id, std::int64_t o, double t) {
  const auto i = static_cast<std::size_t>(id);
  if (member_[i]) {
    if (o_[i] == o && negt_[i] == -t) return;
    const auto b = buckets_.find(o_[i]);
    auto node = b->second.extract({negt_[i], id});
    if (b->second.empty()) buckets_.erase(b);
    node.value().first = -t;
    buckets_[o].insert(std::move(node));
  } else {
    member_[i] = 1;
    ++size_;
    buckets_[o].emplace(-t, id);
  }
  o_[i] = o;
  negt_[i] = -t;
}

void SentPrefixes::add(std::int64_t key, ReplicaId to) {
  std::vector<ReplicaId>& v = sent_[key];
  const auto it = std::lower_bound(v.begin(), v.end(), to);
  if (it == v.end() || *it != to) v.insert(it, to);
}

void SentPrefixes::record(const RequestSpec& spec, ReplicaId to) {
  if (spec.hashes) {
    const std::vector<std::int64_t>& chain = spec.hashes->chain;
    for (std::size_t j = 0; j < chain.size(); j = j == 0 ? 1 : 2 * j) add(chain[j], to);
  } else if (spec.prefix_group >= 0) {
    add(spec.prefix_group, to);
  }
}

}  // namespace servesim
