#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/engine/replica.hpp"

namespace servesim {

// The routable replicas ordered by outstanding requests (waiting + running), kept current by the
// engine's replica updates (Router::on_routable, Router::on_replica_update), so a router finds
// the least loaded replica, the fleet's least and most, and their total in O(log N) instead of
// scanning every replica. Only valid for a request offered every routable replica (`covers`):
// a request that fits on fewer is routed by a scan. Deterministic; not thread-safe.
class OutstandingIndex {
 public:
  // Makes `routable` the members, with their current loads.
  void rebuild(const Fleet& fleet, const std::vector<ReplicaId>& routable);
  // Re-reads a member's load; other replicas are ignored.
  void update(const Replica& replica);
  // Whether `eligible` (a subset of the routable replicas) is all of them.
  bool covers(const std::vector<ReplicaId>& eligible) const {
    return built_ && !order_.empty() && eligible.size() == order_.size();
  }
  std::int64_t least() const { return order_.begin()->first; }
  std::int64_t most() const { return order_.rbegin()->first; }
  std::int64_t total() const { return total_; }
  std::size_t size() const { return order_.size(); }
  // The member with the least load, ties taken in turn: the first tied id at or after `next`,
  // else the lowest tied id (as LeastInTurn over the members).
  ReplicaId least_in_turn(ReplicaId next) const;

 private:
  bool built_ = false;
  std::vector<std::int64_t> load_;  // per replica id; -1: not a member
  std::set<std::pair<std::int64_t, ReplicaId>> order_;
  std::int64_t total_ = 0;
};

}  // namespace servesim
