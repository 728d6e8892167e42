#pragma once

#include <nlohmann/json.hpp>

#include "sim/engine/replica.hpp"

namespace servesim {

// summary["kv_offload"] of a run with a CPU KV tier (tools/README.md "summary.json"): the fleet's
// totals over its replicas' tiers (KvOffload), bytes over all of a replica's GPUs. `makespan_s`
// turns the device→host copy time into the link's busy fraction. Null without a tier.
nlohmann::json kv_offload_summary(const Fleet& fleet, double makespan_s);

}  // namespace servesim
