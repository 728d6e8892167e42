#pragma once

#include <cstdint>
#include <memory>

#include "sim/config/run_config.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/router.hpp"
#include "sim/engine/speculation.hpp"
#include "sim/engine/workload.hpp"
#include "sim/hardware/catalog.hpp"
#include "tools/common/run_cache.hpp"

namespace servesim {

// Everything one run needs, built and validated from a RunConfig before simulated time 0.
struct BuiltRun {
  RunConfig config;
  std::shared_ptr<Catalog> catalog;  // owns the specs the fleet points at (declared first: the
                                     // cost model's tables key on their addresses)
  Fleet fleet;
  std::unique_ptr<Router> router;
  std::unique_ptr<Router> decode_router;  // disaggregated fleets only
  std::shared_ptr<const CostModel> cost_model;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Speculation> speculation;  // the `speculative:` section's; null without it
};

// Builds `config`'s run; with a cache, its catalog and cost model come from (and go into) it.
BuiltRun build_run(const RunConfig& config, RunCache* cache = nullptr);

// The seed of one part of a run (stream 0 workload, 1 router, 2 SLO draws, 3 decode router,
// 4 speculative acceptance draws, 5 LoRA adapter draws),
// independent of the others' (splitmix64 of the run's seed).
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream);

}  // namespace servesim
