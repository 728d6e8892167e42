#include "schedulers/registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "schedulers/replica/edf_scheduler.hpp"
#include "schedulers/replica/orca_scheduler.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/replica/vllm_scheduler.hpp"
#include "schedulers/router/global_queue_router.hpp"
#include "schedulers/router/least_outstanding_router.hpp"
#include "schedulers/router/least_prefill_router.hpp"
#include "schedulers/router/length_split_router.hpp"
#include "schedulers/router/lora_affinity_router.hpp"
#include "schedulers/router/power_aware_router.hpp"
#include "schedulers/router/prefix_aware_router.hpp"
#include "schedulers/router/random_router.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "schedulers/router/session_affinity_router.hpp"
#include "sim/config/kind_table.hpp"

namespace servesim {
namespace {

// Capabilities of the vLLM V1 chunked-prefill family (sarathi, edf, chunked vllm).
constexpr SchedulerCapabilities kChunked{/*chunked_prefill=*/true, /*prefix_caching=*/true,
                                         /*prefill_role=*/true, /*decode_role=*/true,
                                         /*pulls_fleet_queue=*/true};

// A router kind that takes only `kind:`.
template <class R>
std::unique_ptr<Router> make_plain(const ConfigNode& n, std::uint64_t /*seed*/) {
  n.check_keys({"kind"});
  return std::make_unique<R>();
}

// A router kind whose static R::parse reads its section (and refuses unknown keys).
template <class R>
std::unique_ptr<Router> make_parsed(const ConfigNode& n, std::uint64_t /*seed*/) {
  return std::make_unique<R>(R::parse(n));
}

}  // namespace

// The explicit table of replica schedulers (no static self-registration). Keep sorted by kind.
const std::vector<SchedulerEntry>& replica_scheduler_entries() {
  static const std::vector<SchedulerEntry> entries{
      {"edf",
       {"preempt_for_deadline"},
       [](const SchedulerOptions&) { return kChunked; },
       [](const SchedulerOptions& o) -> std::unique_ptr<ReplicaScheduler> {
         return std::make_unique<EdfScheduler>(o);
       },
       ""},
      {"orca",
       {"batch_wait_timeout_iters", "batch_wait_max_tokens_ratio"},
       [](const SchedulerOptions&) { return SchedulerCapabilities{}; },
       [](const SchedulerOptions& o) -> std::unique_ptr<ReplicaScheduler> {
         return std::make_unique<OrcaScheduler>(o);
       },
       "reserves each request's whole KV at admission"},
      {"sarathi",
       {"scheduler_recv_interval"},
       [](const SchedulerOptions&) { return kChunked; },
       [](const SchedulerOptions& o) -> std::unique_ptr<ReplicaScheduler> {
         return std::make_unique<SarathiScheduler>(o);
       },
       ""},
      {"vllm",
       {"scheduler_recv_interval"},
       [](const SchedulerOptions& o) {
         if (o.enable_chunked_prefill) return kChunked;
         SchedulerCapabilities c;
         c.prefix_caching = c.prefill_role = c.decode_role = true;
         return c;
       },
       [](const SchedulerOptions& o) -> std::unique_ptr<ReplicaScheduler> {
         if (o.enable_chunked_prefill) {
           // vLLM's chunked-prefill default budget for online serving is 2048 tokens.
           SchedulerOptions chunked = o;
           if (chunked.max_num_batched_tokens <= 0) chunked.max_num_batched_tokens = 2048;
           return std::make_unique<SarathiScheduler>(chunked);
         }
         return std::make_unique<VllmScheduler>(o);
       },
       ""},
  };
  return entries;
}

// The explicit table of routers. Keep sorted by kind.
const std::vector<RouterEntry>& router_entries() {
  // Capabilities: routes arrivals, routes decodes, fleet queue, prices with the cost model.
  static const std::vector<RouterEntry> entries{
      {"cap_blind",
       {true, false, false, true},
       [](const ConfigNode& n, std::uint64_t) -> std::unique_ptr<Router> {
         n.check_keys({"kind"});
         return std::make_unique<PowerAwareRouter>(/*cap_blind=*/true);
       }},
      {"global_queue", {true, false, true, true}, make_parsed<GlobalQueueRouter>},
      {"least_outstanding", {true, true, false, false}, make_plain<LeastOutstandingRouter>},
      {"least_prefill_tokens", {true, false, false, false}, make_plain<LeastPrefillRouter>},
      {"length_split", {true, false, false, false}, make_parsed<LengthSplitRouter>},
      {"lora_affinity", {true, false, false, false}, make_parsed<LoraAffinityRouter>},
      {"most_free_kv",
       {false, true, false, false},
       [](const ConfigNode& n, std::uint64_t) -> std::unique_ptr<Router> {
         n.check_keys({"kind", "local_first"});
         return std::make_unique<MostFreeKvRouter>(n.get_bool("local_first", false));
       }},
      {"power_aware",
       {true, false, false, true},
       [](const ConfigNode& n, std::uint64_t) -> std::unique_ptr<Router> {
         n.check_keys({"kind"});
         return std::make_unique<PowerAwareRouter>(/*cap_blind=*/false);
       }},
      {"prefix_aware", {true, false, false, false}, make_parsed<PrefixAwareRouter>},
      {"random",
       {true, true, false, false},
       [](const ConfigNode& n, std::uint64_t seed) -> std::unique_ptr<Router> {
         n.check_keys({"kind"});
         return std::make_unique<RandomRouter>(seed);
       }},
      {"round_robin", {true, true, false, false}, make_plain<RoundRobinRouter>},
      {"session_affinity", {true, false, false, false}, make_parsed<SessionAffinityRouter>},
  };
  return entries;
}

namespace {

// The entry of node["kind"] among those `keep` accepts (lookup_kind).
template <class Entry, class Keep = AnyEntry>
const Entry& lookup(const std::vector<Entry>& table, const ConfigNode& node, std::string_view what,
                    Keep keep = {}) {
  return lookup_kind(table, node.at("kind"), what, keep);
}

const SchedulerEntry& scheduler_entry(const ConfigNode& node) {
  return lookup(replica_scheduler_entries(), node, "scheduler",
                [](const SchedulerEntry&) { return true; });
}

// "a, b or c".
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

// Scheduler kinds with a capability under default options.
template <class Has>
std::vector<std::string> scheduler_kinds_with(Has has) {
  return kinds_of(replica_scheduler_entries(),
                  [&has](const SchedulerEntry& e) { return has(e.capabilities({})); });
}

// The kinds that chunk: "kind edf or sarathi, or vllm with enable_chunked_prefill: true".
std::string chunked_kinds() {
  const auto chunks = [](const SchedulerCapabilities& c) { return c.chunked_prefill; };
  std::string out = "kind " + one_of(scheduler_kinds_with(chunks));
  SchedulerOptions chunked;
  chunked.enable_chunked_prefill = true;
  for (const SchedulerEntry& e : replica_scheduler_entries()) {
    if (!e.capabilities({}).chunked_prefill && e.capabilities(chunked).chunked_prefill) {
      out += fmt::format(", or {} with enable_chunked_prefill: true", e.kind);
    }
  }
  return out;
}

}  // namespace

const SchedulerEntry* find_replica_scheduler(std::string_view kind) {
  for (const SchedulerEntry& e : replica_scheduler_entries()) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

const RouterEntry* find_router(std::string_view kind) {
  for (const RouterEntry& e : router_entries()) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

SchedulerCapabilities scheduler_capabilities(const ConfigNode& node,
                                             const SchedulerOptions& options) {
  return scheduler_entry(node).capabilities(options);
}

bool chunked_prefill(const ConfigNode& node, const SchedulerOptions& options) {
  return scheduler_capabilities(node, options).chunked_prefill;
}

std::unique_ptr<ReplicaScheduler> make_replica_scheduler(const ConfigNode& node,
                                                         const SchedulerOptions& options) {
  node.require_map("a scheduler section");
  const SchedulerEntry& entry = scheduler_entry(node);
  std::vector<std::string> known(std::begin(kCommonSchedulerKeys), std::end(kCommonSchedulerKeys));
  for (const std::string_view key : entry.extra_keys) known.emplace_back(key);
  node.check_keys(known);
  const SchedulerCapabilities caps = entry.capabilities(options);
  if (options.async_scheduling && !caps.chunked_prefill) {
    node.at("async_scheduling")
        .fail(fmt::format("async scheduling is vLLM V1's: it needs chunked prefill ({})",
                          chunked_kinds()));
  }
  if (options.enable_prefix_caching && !caps.prefix_caching) {
    node.at("enable_prefix_caching")
        .fail(fmt::format("{} {} and keeps no prefix cache (expected kind {} for prefix caching)",
                          entry.kind, entry.limitation,
                          one_of(scheduler_kinds_with(
                              [](const SchedulerCapabilities& c) { return c.prefix_caching; }))));
  }
  return entry.make(options);
}

void check_disaggregation_roles(const ConfigNode& scheduler, const SchedulerOptions& options) {
  const SchedulerEntry& entry = scheduler_entry(scheduler);
  const SchedulerCapabilities caps = entry.capabilities(options);
  if (caps.prefill_role && caps.decode_role) return;
  scheduler.at("kind").fail(fmt::format(
      "{} {} and cannot hand a prefill off or take one in (expected kind {} in a disaggregated "
      "fleet)",
      entry.kind, entry.limitation, one_of(scheduler_kinds_with([](const SchedulerCapabilities& c) {
        return c.prefill_role && c.decode_role;
      }))));
}

void check_fleet_queue(const ConfigNode& router, const ConfigNode& scheduler,
                       const SchedulerOptions& options) {
  const RouterEntry& entry = lookup(router_entries(), router, "router", [](const RouterEntry& e) {
    return e.capabilities.routes_arrivals;
  });
  if (!entry.capabilities.fleet_queue ||
      scheduler_capabilities(scheduler, options).pulls_fleet_queue) {
    return;
  }
  router.at("kind").fail(fmt::format(
      "replicas pull from the {} router's queue as vLLM V1's chunked-prefill scheduler admits "
      "(expected scheduler {})",
      entry.kind, chunked_kinds()));
}

std::unique_ptr<Router> make_router(const ConfigNode& node, std::uint64_t seed) {
  node.require_map("a router section");
  return lookup(router_entries(), node, "router",
                [](const RouterEntry& e) { return e.capabilities.routes_arrivals; })
      .make(node, seed);
}

std::unique_ptr<Router> make_decode_router(const ConfigNode& node, std::uint64_t seed) {
  node.require_map("a decode_router section");
  return lookup(router_entries(), node, "decode router",
                [](const RouterEntry& e) { return e.capabilities.routes_decodes; })
      .make(node, seed);
}

std::vector<std::string> replica_scheduler_kinds() {
  return kinds_of(replica_scheduler_entries(), [](const SchedulerEntry&) { return true; });
}
std::vector<std::string> router_kinds() {
  return kinds_of(router_entries(),
                  [](const RouterEntry& e) { return e.capabilities.routes_arrivals; });
}
std::vector<std::string> decode_router_kinds() {
  return kinds_of(router_entries(),
                  [](const RouterEntry& e) { return e.capabilities.routes_decodes; });
}

}  // namespace servesim
