#pragma once

#include "sim/router.hpp"

namespace servesim {

// Sends each request to the replica with the fewest outstanding (waiting + running) requests;
// ties go to the lowest id.
class LeastOutstandingRouter : public Router {
 public:
  std::string_view name() const override { return "least_outstanding"; }
  ReplicaId route(const Request& request, const Fleet& fleet,
                  const std::vector<ReplicaId>& eligible, SimTime now) override;
};

}  // namespace servesim
