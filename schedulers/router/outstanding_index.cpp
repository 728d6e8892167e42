#include "schedulers/router/outstanding_index.hpp"

namespace servesim {

void OutstandingIndex::rebuild(const Fleet& fleet, const std::vector<ReplicaId>& routable) {
  load_.assign(fleet.size(), -1);
  order_.clear();
  total_ = 0;
  for (const ReplicaId id : routable) {
    const std::int64_t o = fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
    load_[static_cast<std::size_t>(id)] = o;
    order_.emplace(o, id);
    total_ += o;
  }
  built_ = true;
}

void OutstandingIndex::update(const Replica& replica) {
  const auto i = static_cast<std::size_t>(replica.id);
  if (i >= load_.size() || load_[i] < 0) return;
  const std::int64_t o = replica.scheduler->num_outstanding();
  if (o == load_[i]) return;
  // The node is moved to its new key without an allocation.
  auto node = order_.extract({load_[i], replica.id});
  node.value().first = o;
  order_.insert(std::move(node));
  total_ += o - load_[i];
  load_[i] = o;
}

ReplicaId OutstandingIndex::least_in_turn(ReplicaId next) const {
  const std::int64_t least = order_.begin()->first;
  const auto it = order_.lower_bound({least, next});
  return it != order_.end() && it->first == least ? it->second : order_.begin()->second;
}

}  // namespace servesim
