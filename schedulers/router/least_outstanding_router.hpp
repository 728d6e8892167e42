#pragma once

#include <vector>

#include "schedulers/router/round_robin_router.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Sends each request to the replica with the fewest outstanding (waiting + running) requests;
// ties are taken in turn (round robin over the tied replicas), so identical replicas under light
// load share the work instead of the lowest id taking it all.
class LeastOutstandingRouter : public Router {
 public:
  std::string_view name() const override { return "least_outstanding"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  LeastInTurn least_;
};

}  // namespace servesim
