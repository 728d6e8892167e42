// The contract behind the "add a router" and "add a replica scheduler" recipes
// (schedulers/README.md): an entry in its registry table is all a kind needs to run in a whole
// simulation, since Simulation (run/) is the only code that builds and wires an engine. Every
// router entry (as the arrival router and, where it routes decodes, as the decode router of a
// disaggregated fleet) and every scheduler entry runs a config to the end here, reached through
// nothing but its `kind:`; a new entry joins these loops without any edit outside its files,
// its registry line and its CMake line.
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "run/simulation.hpp"
#include "schedulers/registry.hpp"
#include "sim/config/run_config.hpp"

namespace servesim {
namespace {

// The keys a kind cannot run without, beyond `kind:` (the smallest section its parser takes).
std::string router_section(std::string_view kind) {
  if (kind == "length_split") {
    return fmt::format(
        "{{kind: {}, pools: [{{groups: [0], max_prompt_tokens: 300}}, "
        "{{groups: [1]}}]}}",
        kind);
  }
  return fmt::format("{{kind: {}}}", kind);
}

// Runs `replicas`, `scheduler`, `routers` (the router keys) on 40 requests of mixed prompt lengths
// and returns the engine's totals.
EngineTotals run(const std::string& replicas, const std::string& scheduler,
                 const std::string& routers) {
  const std::string yaml = fmt::format(
      "name: contract\nseed: 5\nmodel: meta-llama/Llama-3.1-8B\nreplicas: {}\nscheduler: {}\n{}"
      "cost_model: {{kind: analytical}}\n"
      "workload:\n  arrival: {{kind: poisson, qps: 8}}\n"
      "  lengths: {{kind: uniform, min_tokens: 100, max_tokens: 900, prefill_decode_ratio: 4}}\n"
      "  num_requests: 40\n",
      replicas, scheduler, routers);
  Simulation sim(RunConfig::parse(ConfigNode::parse(yaml, "contract.yaml")));
  return sim.run();
}

void check_complete(const EngineTotals& t) {
  CHECK(t.complete);
  CHECK(t.arrived == 40);
  CHECK(t.arrived == t.finished + t.rejected);
  CHECK(t.finished > 0);
}

}  // namespace

TEST_CASE("every router entry runs a whole simulation through its kind alone",
          "[registry][contract]") {
  const std::string two_groups = "[{gpu: h100-sxm}, {gpu: h100-sxm}]";
  for (const RouterEntry& entry : router_entries()) {
    INFO("router " << entry.kind);
    if (entry.capabilities.routes_arrivals) {
      check_complete(run(two_groups, "{kind: sarathi, max_num_seqs: 16}",
                         fmt::format("router: {}\n", router_section(entry.kind))));
    }
    if (entry.capabilities.routes_decodes) {
      const EngineTotals t =
          run("[{gpu: h100-sxm, role: prefill}, {gpu: h100-sxm, count: 2, role: decode}]",
              "{kind: sarathi, max_num_seqs: 16}",
              fmt::format("router: {{kind: least_prefill_tokens}}\ndecode_router: {}\n",
                          router_section(entry.kind)));
      check_complete(t);
      CHECK(t.transfers > 0);  // requests reached the decode side through it
    }
  }
}

TEST_CASE("every replica scheduler entry runs a whole simulation through its kind alone",
          "[registry][contract]") {
  for (const SchedulerEntry& entry : replica_scheduler_entries()) {
    INFO("scheduler " << entry.kind);
    check_complete(run("[{gpu: h100-sxm}]",
                       fmt::format("{{kind: {}, max_num_seqs: 16}}", entry.kind),
                       "router: {kind: round_robin}\n"));
  }
}

}  // namespace servesim
