#pragma once

#include <string_view>

#include "sim/engine/cost_model.hpp"
#include "sim/engine/fleet_queue.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// Assigns each arriving request to a replica. Only replicas on which the request can ever fit
// are offered (`eligible`, non-empty, ascending ids). Deterministic for a given seed. A router
// may instead keep the request in a fleet-level queue the replicas pull from (route returns
// kQueued; queue() is that queue), or refuse it (kRefused, with request.reject_reason set).
class Router {
 public:
  Router() = default;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;
  virtual ~Router() = default;

  virtual std::string_view name() const = 0;
  // Returns one of `eligible`, or kQueued / kRefused (see above).
  virtual ReplicaId route(Request& request, const Fleet& fleet,
                          const std::vector<ReplicaId>& eligible, SimTime now) = 0;
  // Called once by the engine before the run: the fleet and the cost model its replicas are
  // priced with (a router that estimates waits prices them with the same model).
  virtual void attach(const Fleet& /*fleet*/, const CostModel& /*cost_model*/) {}
  // `routable`: the replicas offered to a request that fits on every one of them (all but decode
  // replicas; with autoscaling, the active ones). Called before the first request and whenever
  // the set changes. A router that keeps an index of replica state builds it here.
  virtual void on_routable(const Fleet& /*fleet*/, const std::vector<ReplicaId>& /*routable*/) {}
  // A replica's outstanding requests or KV use may have changed (a request joined it, a step
  // formed or ended, a transfer freed its KV): a router that keeps an index updates it here.
  virtual void on_replica_update(const Replica& /*replica*/) {}
  // The fleet-level queue of a router that holds requests; nullptr for one that does not.
  virtual FleetQueue* queue() { return nullptr; }
};

}  // namespace servesim
