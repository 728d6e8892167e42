#include "schedulers/router/random_router.hpp"

namespace servesim {

ReplicaId RandomRouter::route(Request& /*request*/, const Fleet& /*fleet*/,
                              const std::vector<ReplicaId>& eligible, SimTime /*now*/) {
  // 53 random bits as a uniform double in [0, 1), scaled to an index.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  const auto index = static_cast<std::size_t>(u * static_cast<double>(eligible.size()));
  return eligible[index];
}

}  // namespace servesim
