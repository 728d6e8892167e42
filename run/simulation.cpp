#include "run/simulation.hpp"

#include <stdexcept>
#include <utility>

#include "sim/util/splitmix.hpp"

namespace servesim {

Simulation::Simulation(const RunConfig& config, RunCache* cache) : run_(build_run(config, cache)) {}

Simulation::Simulation(BuiltRun run) : run_(std::move(run)) {}

EngineTotals Simulation::run(RunHooks hooks) {
  if (engine_) throw std::logic_error("a Simulation runs once");
  const CostModel& cost = hooks.cost_model != nullptr ? *hooks.cost_model : *run_.cost_model;
  std::vector<RunObserver*> observers = std::move(hooks.observers);
  if (run_.autoscaler) observers.push_back(run_.autoscaler.get());
  engine_.emplace(EngineParts{
      .fleet = run_.fleet,
      .router = *run_.router,
      .workload = *run_.workload,
      .cost_model = cost,
      .observers = std::move(observers),
      // Deadlines leave room for the request overhead of the cost model that prices the run.
      .slo = &run_.config.slo,
      .slo_overhead_ns = cost.request_overhead_ns(),
      .slo_seed = stream_seed(run_.config.seed, 2),
      .decode_router = run_.decode_router.get(),
      .cluster = run_.decode_router ? &run_.config.cluster : nullptr,
      .speculation = run_.speculation.get(),
      .autoscaler = run_.autoscaler.get(),
      .stop = hooks.stop,
      .progress = std::move(hooks.progress),
  });
  return engine_->run();
}

}  // namespace servesim
