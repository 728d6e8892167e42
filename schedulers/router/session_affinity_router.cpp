#include "schedulers/router/session_affinity_router.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace servesim {
namespace {

std::int64_t outstanding_of(const Fleet& fleet, ReplicaId id) {
  return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
}

}  // namespace

SessionAffinityRouter::Options SessionAffinityRouter::parse(const ConfigNode& node) {
  node.check_keys({"kind", "overload_factor"});
  Options o;
  o.overload_factor = node.get_positive("overload_factor", o.overload_factor);
  if (o.overload_factor < 1 || o.overload_factor > 1e6) {
    node.at("overload_factor")
        .fail(fmt::format("{} is out of range (expected a factor in [1, 1e6] of the fleet mean)",
                          o.overload_factor));
  }
  return o;
}

void SessionAffinityRouter::refresh_mean(const Fleet& fleet,
                                         const std::vector<ReplicaId>& eligible) {
  mean_ = static_cast<double>(total_outstanding(fleet, eligible)) /
          static_cast<double>(eligible.size());
  since_scan_ = 0;
}

ReplicaId SessionAffinityRouter::least_loaded_refreshing(Request& request, const Fleet& fleet,
                                                         const std::vector<ReplicaId>& eligible,
                                                         SimTime now) {
  const ReplicaId id = least_loaded(request, fleet, eligible, now);
  refresh_mean(fleet, eligible);
  return id;
}

ReplicaId SessionAffinityRouter::route(Request& request, const Fleet& fleet,
                                       const std::vector<ReplicaId>& eligible, SimTime now) {
  const std::int64_t session = request.spec.session;
  if (session < 0) return least_loaded_refreshing(request, fleet, eligible, now);
  const auto it = home_.find(session);
  if (it == home_.end()) {
    const ReplicaId id = least_loaded_refreshing(request, fleet, eligible, now);
    home_.emplace(session, id);
    return id;
  }
  if (since_scan_ >= static_cast<std::int64_t>(fleet.size())) refresh_mean(fleet, eligible);
  const ReplicaId home = it->second;
  const bool fits = std::binary_search(eligible.begin(), eligible.end(), home);
  const double limit = o_.overload_factor * std::max(mean_, 1.0);
  if (fits && static_cast<double>(outstanding_of(fleet, home)) <= limit) {
    ++sticky_;
    ++since_scan_;
    return home;
  }
  ++moved_;
  const ReplicaId id = least_loaded_refreshing(request, fleet, eligible, now);
  it->second = id;
  return id;
}

}  // namespace servesim
