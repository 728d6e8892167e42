#include "schedulers/router/least_outstanding_router.hpp"

namespace servesim {

ReplicaId LeastOutstandingRouter::route(const Request& /*request*/, const Fleet& fleet,
                                        const std::vector<ReplicaId>& eligible, SimTime /*now*/) {
  ReplicaId best = eligible.front();
  std::int64_t best_load = fleet[static_cast<std::size_t>(best)]->scheduler->num_outstanding();
  for (ReplicaId id : eligible) {
    const std::int64_t load = fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
    if (load < best_load) {
      best = id;
      best_load = load;
    }
  }
  return best;
}

}  // namespace servesim
