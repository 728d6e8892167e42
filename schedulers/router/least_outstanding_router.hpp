#pragma once

#include <cstdint>
#include <vector>

#include "schedulers/router/outstanding_index.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// The base of the routers that fall back on the least loaded replica: it keeps the index of
// the replicas' outstanding requests from the engine's hooks, and finds the least loaded
// eligible replica (ties in turn) in O(log N) from it, or by a scan when the request fits on
// only some replicas.
class LeastLoadedRouter : public Router {
 public:
  void on_routable(const Fleet& fleet, const std::vector<ReplicaId>& routable) override {
    index_.rebuild(fleet, routable);
  }
  void on_replica_update(const Replica& replica) override { index_.update(replica); }
  // Requests routed from the index of loads (the rest by a scan).
  std::int64_t indexed_routes() const { return least_.indexed(); }

 protected:
  ReplicaId least_loaded(Request& request, const Fleet& fleet,
                         const std::vector<ReplicaId>& eligible, SimTime now);
  // The eligible replicas' outstanding requests in all.
  std::int64_t total_outstanding(const Fleet& fleet, const std::vector<ReplicaId>& eligible) const;

 private:
  LeastInTurn least_;
  OutstandingIndex index_;
};

// Sends each request to the replica with the fewest outstanding (waiting + running) requests;
// ties are taken in turn (round robin over the tied replicas), so identical replicas under light
// load share the work instead of the lowest id taking it all. O(log N) per request from an index
// of the replicas' loads; a request that fits on only some replicas is routed by a scan.
class LeastOutstandingRouter : public LeastLoadedRouter {
 public:
  std::string_view name() const override { return "least_outstanding"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override {
    return least_loaded(request, fleet, eligible, now);
  }
};

}  // namespace servesim
