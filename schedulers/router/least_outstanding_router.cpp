#include "schedulers/router/least_outstanding_router.hpp"

namespace servesim {

ReplicaId LeastOutstandingRouter::route(Request& request, const Fleet& fleet,
                                        const std::vector<ReplicaId>& eligible, SimTime now) {
  std::int64_t least = -1;
  tied_.clear();
  for (ReplicaId id : eligible) {
    const std::int64_t load = fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
    if (least < 0 || load < least) {
      least = load;
      tied_.clear();
    }
    if (load == least) tied_.push_back(id);
  }
  return turn_.route(request, fleet, tied_, now);
}

}  // namespace servesim
