#pragma once

#include <cstdint>
#include <random>

#include "sim/engine/router.hpp"

namespace servesim {

// Picks an eligible replica uniformly at random (seeded mt19937_64; the index is drawn with a
// fixed formula so results do not depend on the standard library's distributions).
class RandomRouter : public Router {
 public:
  explicit RandomRouter(std::uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

 private:
  std::mt19937_64 rng_;
};

}  // namespace servesim
