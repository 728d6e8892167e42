#pragma once

#include <vector>

#include "sim/engine/router.hpp"

namespace servesim {

// Cycles over the replicas in id order, skipping those the request cannot fit.
class RoundRobinRouter : public Router {
 public:
  std::string_view name() const override { return "round_robin"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

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

 private:
  RoundRobinRouter turn_;        // whose turn it is among tied replicas
  std::vector<ReplicaId> tied_;  // scratch: the eligible replicas with the least key
};

}  // namespace servesim
