#include "schedulers/registry.hpp"

#include <functional>
#include <map>

#include <fmt/format.h>

#include "schedulers/replica/edf_scheduler.hpp"
#include "schedulers/replica/orca_scheduler.hpp"
#include "schedulers/replica/sarathi_scheduler.hpp"
#include "schedulers/replica/vllm_scheduler.hpp"
#include "schedulers/router/global_queue_router.hpp"
#include "schedulers/router/least_outstanding_router.hpp"
#include "schedulers/router/least_prefill_router.hpp"
#include "schedulers/router/power_aware_router.hpp"
#include "schedulers/router/random_router.hpp"
#include "schedulers/router/round_robin_router.hpp"
#include "sim/config/suggest.hpp"

namespace servesim {
namespace {

using SchedulerFactory = std::function<std::unique_ptr<ReplicaScheduler>(const SchedulerOptions&)>;
using RouterFactory =
    std::function<std::unique_ptr<Router>(const ConfigNode& node, std::uint64_t seed)>;

const std::map<std::string, SchedulerFactory>& scheduler_table() {
  static const std::map<std::string, SchedulerFactory> table{
      {"edf", [](const SchedulerOptions& o) { return std::make_unique<EdfScheduler>(o); }},
      {"orca", [](const SchedulerOptions& o) { return std::make_unique<OrcaScheduler>(o); }},
      {"sarathi", [](const SchedulerOptions& o) { return std::make_unique<SarathiScheduler>(o); }},
      {"vllm",
       [](const SchedulerOptions& o) -> std::unique_ptr<ReplicaScheduler> {
         if (o.enable_chunked_prefill) {
           // vLLM's chunked-prefill default budget for online serving is 2048 tokens.
           SchedulerOptions chunked = o;
           if (chunked.max_num_batched_tokens <= 0) chunked.max_num_batched_tokens = 2048;
           return std::make_unique<SarathiScheduler>(chunked);
         }
         return std::make_unique<VllmScheduler>(o);
       }},
  };
  return table;
}

const std::map<std::string, RouterFactory>& router_table() {
  static const std::map<std::string, RouterFactory> table{
      {"global_queue",
       [](const ConfigNode& n, std::uint64_t) {
         return std::make_unique<GlobalQueueRouter>(GlobalQueueRouter::parse(n));
       }},
      {"least_outstanding",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind"});
         return std::make_unique<LeastOutstandingRouter>();
       }},
      {"least_prefill_tokens",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind"});
         return std::make_unique<LeastPrefillRouter>();
       }},
      {"power_aware",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind"});
         return std::make_unique<PowerAwareRouter>(/*cap_blind=*/false);
       }},
      {"cap_blind",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind"});
         return std::make_unique<PowerAwareRouter>(/*cap_blind=*/true);
       }},
      {"random",
       [](const ConfigNode& n, std::uint64_t seed) {
         n.check_keys({"kind"});
         return std::make_unique<RandomRouter>(seed);
       }},
      {"round_robin",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind"});
         return std::make_unique<RoundRobinRouter>();
       }},
  };
  return table;
}

// Decode routers pick among decode replicas with room now: none queues or refuses.
const std::map<std::string, RouterFactory>& decode_router_table() {
  static const std::map<std::string, RouterFactory> table{
      {"most_free_kv",
       [](const ConfigNode& n, std::uint64_t) {
         n.check_keys({"kind", "local_first"});
         return std::make_unique<MostFreeKvRouter>(n.get_bool("local_first", false));
       }},
      {"least_outstanding", router_table().at("least_outstanding")},
      {"random", router_table().at("random")},
      {"round_robin", router_table().at("round_robin")},
  };
  return table;
}

template <class Table>
std::vector<std::string> kinds_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& [k, v] : table) out.push_back(k);
  return out;
}

template <class Table>
const typename Table::mapped_type& lookup(const Table& table, const ConfigNode& node,
                                          std::string_view what) {
  const ConfigNode kind = node.at("kind");
  const std::string name = kind.as_string();
  auto it = table.find(name);
  if (it == table.end()) {
    const std::vector<std::string> known = kinds_of(table);
    kind.fail(fmt::format("unknown {} '{}' ({}known: {})", what, name, did_you_mean(name, known),
                          fmt::join(known, ", ")));
  }
  return it->second;
}

}  // namespace

bool chunked_prefill(const ConfigNode& node, const SchedulerOptions& options) {
  (void)lookup(scheduler_table(), node, "scheduler");  // an unknown kind is named first
  const std::string kind = node.get_string("kind");
  return kind == "sarathi" || kind == "edf" || (kind == "vllm" && options.enable_chunked_prefill);
}

std::unique_ptr<ReplicaScheduler> make_replica_scheduler(const ConfigNode& node,
                                                         const SchedulerOptions& options) {
  node.require_map("a scheduler section");
  const auto& factory = lookup(scheduler_table(), node, "scheduler");
  std::vector<std::string> known(std::begin(kCommonSchedulerKeys), std::end(kCommonSchedulerKeys));
  if (node.get_string("kind") == "edf") known.emplace_back("preempt_for_deadline");
  node.check_keys(known);
  if (options.async_scheduling && !chunked_prefill(node, options)) {
    node.at("async_scheduling")
        .fail(
            "async scheduling is vLLM V1's: it needs chunked prefill (kind sarathi, or vllm "
            "with enable_chunked_prefill: true)");
  }
  if (options.enable_prefix_caching && node.get_string("kind", "") == "orca") {
    node.at("enable_prefix_caching")
        .fail(
            "orca reserves each request's whole KV at admission and keeps no prefix cache "
            "(expected kind vllm or sarathi for prefix caching)");
  }
  return factory(options);
}

std::unique_ptr<Router> make_router(const ConfigNode& node, std::uint64_t seed) {
  node.require_map("a router section");
  const auto& factory = lookup(router_table(), node, "router");
  return factory(node, seed);
}

std::unique_ptr<Router> make_decode_router(const ConfigNode& node, std::uint64_t seed) {
  node.require_map("a decode_router section");
  const auto& factory = lookup(decode_router_table(), node, "decode router");
  return factory(node, seed);
}

std::vector<std::string> replica_scheduler_kinds() { return kinds_of(scheduler_table()); }
std::vector<std::string> router_kinds() { return kinds_of(router_table()); }
std::vector<std::string> decode_router_kinds() { return kinds_of(decode_router_table()); }

}  // namespace servesim
