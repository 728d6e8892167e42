#include "schedulers/router/least_outstanding_router.hpp"

namespace servesim {

ReplicaId LeastOutstandingRouter::route(Request& request, const Fleet& fleet,
                                        const std::vector<ReplicaId>& eligible, SimTime now) {
  if (index_.covers(eligible)) return least_.route(index_, fleet);
  return least_.route(request, fleet, eligible, now, [&fleet](ReplicaId id) {
    return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
  });
}

}  // namespace servesim
