#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/replica/scheduler_options.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/replica_scheduler.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// What a replica scheduler kind can do beyond the ReplicaScheduler interface. The optional roles
// are interfaces the scheduler it builds also derives from (PrefillRole, DecodeRole,
// FleetQueuePuller); the contract test checks that the two agree.
struct SchedulerCapabilities {
  bool chunked_prefill = false;    // vLLM V1 chunked prefill (what async scheduling needs)
  bool prefix_caching = false;     // keeps a prefix cache (enable_prefix_caching)
  bool prefill_role = false;       // a PrefillRole: serves prefill replicas of a P/D fleet
  bool decode_role = false;        // a DecodeRole: serves decode replicas of a P/D fleet
  bool pulls_fleet_queue = false;  // a FleetQueuePuller: admits from a router's fleet queue
};

// One replica scheduler kind of the registry (schedulers/registry.cpp).
struct SchedulerEntry {
  std::string_view kind;
  std::vector<std::string_view> extra_keys;  // keys beyond kCommonSchedulerKeys
  // What it can do with `options` (vllm chunks only with enable_chunked_prefill).
  SchedulerCapabilities (*capabilities)(const SchedulerOptions& options);
  std::unique_ptr<ReplicaScheduler> (*make)(const SchedulerOptions& options);
  // Why it lacks what it lacks, completing "<kind> … and keeps no prefix cache" ("" if nothing).
  std::string_view limitation;
};

// What a router kind can do; a kind serves as `router:`, as `decode_router:` or as both.
struct RouterCapabilities {
  bool routes_arrivals = false;  // places arriving requests (`router:`)
  // Picks a decode replica for a handed-off request among those with room (`decode_router:`);
  // such a router never queues or refuses.
  bool routes_decodes = false;
  bool fleet_queue = false;  // holds arrivals in a FleetQueue replicas pull from (Router::queue)
  bool prices_with_cost_model = false;  // estimates with the run's cost model (Router::attach)
};

// One router kind of the registry (schedulers/registry.cpp).
struct RouterEntry {
  std::string_view kind;
  RouterCapabilities capabilities;
  // Parses its section (unknown keys are errors) and builds it; `seed` is the router's stream.
  std::unique_ptr<Router> (*make)(const ConfigNode& node, std::uint64_t seed);
};

// Every entry, sorted by kind.
const std::vector<SchedulerEntry>& replica_scheduler_entries();
const std::vector<RouterEntry>& router_entries();
// The entry of `kind`, or nullptr when there is none.
const SchedulerEntry* find_replica_scheduler(std::string_view kind);
const RouterEntry* find_router(std::string_view kind);

// Builds the replica scheduler named by node["kind"]. `options` are the already-parsed common
// keys (with max_model_len resolved). An unknown kind is an InputError at it listing the known
// kinds. `vllm` with enable_chunked_prefill: true is vLLM's chunked-prefill scheduler, i.e.
// `sarathi`.
std::unique_ptr<ReplicaScheduler> make_replica_scheduler(const ConfigNode& node,
                                                         const SchedulerOptions& options);
// What the scheduler section node can do with `options` (an unknown kind is an InputError).
SchedulerCapabilities scheduler_capabilities(const ConfigNode& node,
                                             const SchedulerOptions& options);
// Whether the scheduler section runs chunked prefill (kind sarathi or edf, or vllm with
// enable_chunked_prefill: true): what vLLM V1 features such as async scheduling need.
bool chunked_prefill(const ConfigNode& node, const SchedulerOptions& options);
// Checks before simulated time 0 that the scheduler section can serve both roles of a
// disaggregated fleet; otherwise an InputError at its kind.
void check_disaggregation_roles(const ConfigNode& scheduler, const SchedulerOptions& options);
// Checks before simulated time 0 that, when the router section's kind holds a fleet-level queue,
// the scheduler section can pull from it; otherwise an InputError at the router's kind.
void check_fleet_queue(const ConfigNode& router, const ConfigNode& scheduler,
                       const SchedulerOptions& options);

// Builds the router named by node["kind"] (a kind that routes arrivals).
std::unique_ptr<Router> make_router(const ConfigNode& node, std::uint64_t seed);
// Builds the decode router of a disaggregated fleet (a kind that routes decodes).
std::unique_ptr<Router> make_decode_router(const ConfigNode& node, std::uint64_t seed);

// Kinds, sorted (for messages, --help and the contract test).
std::vector<std::string> replica_scheduler_kinds();
std::vector<std::string> router_kinds();
std::vector<std::string> decode_router_kinds();

}  // namespace servesim
