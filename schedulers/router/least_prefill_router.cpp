#include "schedulers/router/least_prefill_router.hpp"

#include <utility>

namespace servesim {

ReplicaId LeastPrefillRouter::route(Request& request, const Fleet& fleet,
                                    const std::vector<ReplicaId>& eligible, SimTime now) {
  return least_.route(request, fleet, eligible, now, [&fleet](ReplicaId id) {
    return fleet[static_cast<std::size_t>(id)]->scheduler->prefill_backlog_tokens();
  });
}

ReplicaId MostFreeKvRouter::route(Request& request, const Fleet& fleet,
                                  const std::vector<ReplicaId>& eligible, SimTime now) {
  const std::vector<ReplicaId>* offer = &eligible;
  if (local_first_ && request.replica >= 0) {
    const int node = fleet[static_cast<std::size_t>(request.replica)]->node;
    local_.clear();
    for (const ReplicaId id : eligible) {
      if (fleet[static_cast<std::size_t>(id)]->node == node) local_.push_back(id);
    }
    if (!local_.empty()) offer = &local_;
  }
  return least_.route(request, fleet, *offer, now, [&fleet](ReplicaId id) {
    const Replica& r = *fleet[static_cast<std::size_t>(id)];
    return std::pair<std::int64_t, std::int64_t>(-r.kv.free_blocks(), r.scheduler->num_running());
  });
}

}  // namespace servesim
