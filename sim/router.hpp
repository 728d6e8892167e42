#pragma once

#include <string_view>

#include "sim/replica.hpp"
#include "sim/request.hpp"

namespace servesim {

// Assigns each arriving request to a replica. Only replicas on which the request can ever fit
// are offered (`eligible`, non-empty, ascending ids). Deterministic for a given seed.
class Router {
 public:
  Router() = default;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;
  virtual ~Router() = default;

  virtual std::string_view name() const = 0;
  // Returns one of `eligible`.
  virtual ReplicaId route(const Request& request, const Fleet& fleet,
                          const std::vector<ReplicaId>& eligible, SimTime now) = 0;
};

}  // namespace servesim
