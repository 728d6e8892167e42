#pragma once

#include <cstdint>
#include <vector>

#include "schedulers/router/outstanding_index.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Sends each request to the replica with the fewest outstanding (waiting + running) requests;
// ties are taken in turn (round robin over the tied replicas), so identical replicas under light
// load share the work instead of the lowest id taking it all. O(log N) per request from an index
// of the replicas' loads; a request that fits on only some replicas is routed by a scan.
class LeastOutstandingRouter : public Router {
 public:
  std::string_view name() const override { return "least_outstanding"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  void on_routable(const Fleet& fleet, const std::vector<ReplicaId>& routable) override {
    index_.rebuild(fleet, routable);
  }
  void on_replica_update(const Replica& replica) override { index_.update(replica); }
  // Requests routed from the index of loads (the rest by a scan).
  std::int64_t indexed_routes() const { return least_.indexed(); }

 private:
  LeastInTurn least_;
  OutstandingIndex index_;
};

}  // namespace servesim
