#pragma once

#include <cstdint>
#include <memory>

#include "run/run_cache.hpp"
#include "sim/config/run_config.hpp"
#include "sim/engine/autoscaler.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/replica.hpp"
#include "sim/engine/router.hpp"
#include "sim/engine/speculation.hpp"
#include "sim/engine/workload.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/splitmix.hpp"

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
  // The `autoscaling:` section's, over the fleet's max_replicas replicas; null without it. Give
  // it to the Engine (set_autoscaler) and among its observers.
  std::unique_ptr<Autoscaler> autoscaler;
};

// Builds `config`'s run; with a cache, its catalog and cost model come from (and go into) it.
BuiltRun build_run(const RunConfig& config, RunCache* cache = nullptr);

// An autoscaled replica's provisioning delay: the config's provisioning_delay_s, else its
// weights (bf16, or fp8 with the unquantized parameters in bf16) ÷ storage_gb_per_s + the engine
// start time.
SimTime provisioning_delay(const AutoscalingConfig& config, const ReplicaSpec& spec);

// The streams of a run's seed (stream_seed): 0 workload, 1 router, 2 SLO draws, 3 decode router,
// 4 speculative acceptance draws, 5 LoRA adapter draws; band draws from 1000.

}  // namespace servesim
