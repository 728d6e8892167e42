#include "run/lora_setup.hpp"

#include <fmt/format.h>

#include "costmodels/lora/lora_cost_model.hpp"
#include "schedulers/registry.hpp"
#include "sim/util/splitmix.hpp"
#include "workloads/lora_adapter_workload.hpp"

namespace servesim {

void setup_lora(const RunConfig& config, BuiltRun& run) {
  if (!config.lora) return;
  const LoraConfig& lora = *config.lora;
  if (config.disaggregated()) {
    lora.node.fail("multi-LoRA serving is not modelled with prefill/decode disaggregation");
  }
  if (config.speculative) {
    lora.node.fail("multi-LoRA serving is not modelled together with speculative decoding");
  }
  if (const RouterEntry* r = find_router(config.router.get_string("kind", "round_robin"));
      r != nullptr && r->capabilities.fleet_queue) {
    lora.node.fail(fmt::format(
        "multi-LoRA serving needs a router that places requests (router {} holds a fleet queue)",
        r->kind));
  }
  for (auto& replica : run.fleet) {
    const ReplicaSpec& spec = replica->spec;
    std::vector<double> gpu_bytes;
    std::vector<double> host_bytes;
    for (const std::int32_t rank : lora.ranks) {
      gpu_bytes.push_back(lora_adapter_bytes(lora, rank, *spec.model, spec.tp));
      host_bytes.push_back(lora_adapter_bytes(lora, rank, *spec.model, 1));
    }
    LoraCache::Options o;
    o.max_loras = lora.max_loras;
    o.max_cpu_loras = lora.max_cpu_loras;
    o.pcie_gb_per_s = spec.gpu->pcie_gb_per_s;
    o.disk_gb_per_s = lora.disk_gb_per_s;
    replica->lora = std::make_unique<LoraCache>(o, std::move(gpu_bytes), std::move(host_bytes));
    if (!replica->scheduler->attach_lora(replica->lora.get())) {
      lora.node.fail(
          fmt::format("scheduler {} does not serve LoRA adapters with its settings (orca: not "
                      "with batch_wait_timeout_iters)",
                      replica->scheduler->name()));
    }
  }
  run.cost_model = std::make_shared<LoraCostModel>(run.cost_model, lora);
  run.workload = std::make_unique<LoraAdapterWorkload>(std::move(run.workload), lora,
                                                       stream_seed(config.seed, 5));
}

nlohmann::json lora_summary(const Fleet& fleet, const LoraConfig& config) {
  std::int64_t from_cpu = 0;
  std::int64_t from_disk = 0;
  SimTime load_ns = 0;
  std::int64_t steps = 0;
  std::int64_t distinct = 0;
  std::int32_t max_distinct = 0;
  std::int32_t max_gpu = 0;
  for (const auto& r : fleet) {
    if (r->lora == nullptr) continue;
    const LoraCache::Stats& s = r->lora->stats();
    from_cpu += s.loads_from_cpu;
    from_disk += s.loads_from_disk;
    load_ns += s.load_ns;
    steps += s.steps;
    distinct += s.distinct_sum;
    max_distinct = std::max(max_distinct, s.max_distinct);
    max_gpu = std::max(max_gpu, s.max_gpu);
  }
  return {{"num_adapters", config.num_adapters},
          {"max_loras", config.max_loras},
          {"max_cpu_loras", config.max_cpu_loras},
          {"loads_from_cpu", from_cpu},
          {"loads_from_disk", from_disk},
          {"load_s", sim_to_s(load_ns)},
          {"mean_distinct_adapters_per_step",
           steps > 0 ? static_cast<double>(distinct) / static_cast<double>(steps) : 0.0},
          {"max_distinct_adapters_per_step", max_distinct},
          {"max_slots_used", max_gpu}};
}

}  // namespace servesim
