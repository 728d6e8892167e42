#pragma once

#include "sim/router.hpp"

namespace servesim {

// Cycles over the replicas in id order, skipping those the request cannot fit.
class RoundRobinRouter : public Router {
 public:
  std::string_view name() const override { return "round_robin"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  ReplicaId next_ = 0;
};

}  // namespace servesim
