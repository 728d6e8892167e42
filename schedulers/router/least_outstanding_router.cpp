#include "schedulers/router/least_outstanding_router.hpp"

namespace servesim {
namespace {

std::int64_t outstanding_of(const Fleet& fleet, ReplicaId id) {
  return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
}

}  // namespace

ReplicaId LeastLoadedRouter::least_loaded(Request& request, const Fleet& fleet,
                                          const std::vector<ReplicaId>& eligible, SimTime now) {
  if (index_.covers(eligible)) return least_.route(index_, fleet);
  return least_.route(request, fleet, eligible, now,
                      [&fleet](ReplicaId id) { return outstanding_of(fleet, id); });
}

std::int64_t LeastLoadedRouter::total_outstanding(const Fleet& fleet,
                                                  const std::vector<ReplicaId>& eligible) const {
  if (index_.covers(eligible)) return index_.total();
  std::int64_t total = 0;
  for (const ReplicaId id : eligible) total += outstanding_of(fleet, id);
  return total;
}

}  // namespace servesim
