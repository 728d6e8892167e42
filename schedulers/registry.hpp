#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/replica/scheduler_options.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/replica_scheduler.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Builds the replica scheduler named by node["kind"] (vllm, sarathi, orca). `options` are the
// already-parsed common keys (with max_model_len resolved). `vllm` with
// enable_chunked_prefill: true is vLLM's chunked-prefill scheduler, i.e. `sarathi`.
std::unique_ptr<ReplicaScheduler> make_replica_scheduler(const ConfigNode& node,
                                                         const SchedulerOptions& options);
// Whether the scheduler section runs chunked prefill (kind sarathi, or vllm with
// enable_chunked_prefill: true): what vLLM V1 features such as async scheduling need.
bool chunked_prefill(const ConfigNode& node, const SchedulerOptions& options);
// Builds the router named by node["kind"] (round_robin, least_outstanding, random).
std::unique_ptr<Router> make_router(const ConfigNode& node, std::uint64_t seed);

// Builds the decode router of a disaggregated fleet (most_free_kv, least_outstanding, random,
// round_robin).
std::unique_ptr<Router> make_decode_router(const ConfigNode& node, std::uint64_t seed);

std::vector<std::string> replica_scheduler_kinds();
std::vector<std::string> router_kinds();
std::vector<std::string> decode_router_kinds();

}  // namespace servesim
