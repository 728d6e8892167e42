#include "schedulers/router/round_robin_router.hpp"

#include <algorithm>

namespace servesim {

ReplicaId RoundRobinRouter::route(Request& /*request*/, const Fleet& fleet,
                                  const std::vector<ReplicaId>& eligible, SimTime /*now*/) {
  // The first eligible id at or after next_, wrapping around.
  auto it = std::lower_bound(eligible.begin(), eligible.end(), next_);
  const ReplicaId chosen = it != eligible.end() ? *it : eligible.front();
  took(chosen, fleet.size());
  return chosen;
}

}  // namespace servesim
