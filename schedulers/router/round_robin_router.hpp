#pragma once

#include <cstdint>
#include <vector>

#include "schedulers/router/outstanding_index.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Cycles over the replicas in id order, skipping those the request cannot fit.
class RoundRobinRouter : public Router {
 public:
  std::string_view name() const override { return "round_robin"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  // Whose turn it is: the lowest id a next choice may take before wrapping around.
  ReplicaId next() const { return next_; }
  // Records that `chosen` was taken in a fleet of `fleet_size` replicas.
  void took(ReplicaId chosen, std::size_t fleet_size) {
    next_ = static_cast<ReplicaId>((chosen + 1) % static_cast<ReplicaId>(fleet_size));
  }

 private:
  ReplicaId next_ = 0;
};

// Picks an eligible replica with the least key(id), taking ties in turn (round robin over the
// tied replicas), so identical replicas under light load share the work instead of the lowest
// id taking it all. Serves every router that ranks replicas by one number.
class LeastInTurn {
 public:
  template <class Key>
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now, Key key) {
    tied_.clear();
    decltype(key(eligible.front())) least{};
    for (const ReplicaId id : eligible) {
      const auto k = key(id);
      if (tied_.empty() || k < least) {
        least = k;
        tied_.clear();
      }
      if (k == least) tied_.push_back(id);
    }
    return turn_.route(request, fleet, tied_, now);
  }
  // The same choice by outstanding requests, from an index that covers the eligible replicas.
  ReplicaId route(const OutstandingIndex& index, const Fleet& fleet) {
    const ReplicaId chosen = index.least_in_turn(turn_.next());
    turn_.took(chosen, fleet.size());
    ++indexed_;
    return chosen;
  }
  // Whose turn it is among tied replicas, and that `chosen` was taken: for a router that finds
  // the tied replicas itself.
  ReplicaId next() const { return turn_.next(); }
  void took(ReplicaId chosen, std::size_t fleet_size) { turn_.took(chosen, fleet_size); }
  // Choices made from an index.
  std::int64_t indexed() const { return indexed_; }

 private:
  RoundRobinRouter turn_;        // whose turn it is among tied replicas
  std::vector<ReplicaId> tied_;  // scratch: the eligible replicas with the least key
  std::int64_t indexed_ = 0;
};

}  // namespace servesim
