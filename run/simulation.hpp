#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "run/run_builder.hpp"
#include "run/run_cache.hpp"
#include "sim/engine/engine.hpp"
#include "sim/output/metrics.hpp"

namespace servesim {

// What a command varies in a run, and nothing else: the wiring of the engine is Simulation's.
struct RunHooks {
  // A cost model wrapping the built one (Simulation::cost_model()): step times scaled, step-kind
  // factors, an online learner. It must outlive run(). Null: the built cost model.
  const CostModel* cost_model = nullptr;
  // Told every event in this order; the run's autoscaler, if any, is told after them.
  std::vector<RunObserver*> observers = {};
  // While *stop is true the run returns after the event it is on (EngineParts::stop).
  const std::atomic<bool>* stop = nullptr;
  EngineProgress progress = {};
};

// One run of a config: it builds the run (build_run) and is the one place where an Engine is
// made and wired from it, so every command and the Python module run a config the same way: its
// SLO classes and deadlines, disaggregation, speculation and autoscaling, whichever of them the
// config has. A Simulation runs once (the run consumes its workload). Not thread-safe; separate
// Simulations may run on separate threads.
class Simulation {
 public:
  // Builds `config`; with a cache, its catalog and cost model come from (and go into) it.
  explicit Simulation(const RunConfig& config, RunCache* cache = nullptr);
  explicit Simulation(BuiltRun run);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const RunConfig& config() const { return run_.config; }
  const BuiltRun& built() const { return run_; }
  const Fleet& fleet() const { return run_.fleet; }
  // The cost model the config built, before any RunHooks wrapper.
  const CostModel& cost_model() const { return *run_.cost_model; }
  // Whether the workload is a benchmark client (workload.client), whose warm-ups the metrics
  // leave out.
  bool benchmark_client() const { return run_.workload->benchmark_client(); }
  // The metrics of a run priced by `pricing` (the built cost model or a RunHooks wrapper): the
  // config's SLO classes, the pricing's request overhead, the benchmark client's warm-ups left
  // out.
  MetricsCollector metrics(const CostModel& pricing) const {
    return MetricsCollector(run_.config.slo, pricing.request_overhead_ns(), benchmark_client());
  }

  // Runs to the end (or to *hooks.stop) and returns the engine's totals. Throws std::logic_error
  // when called a second time.
  EngineTotals run(RunHooks hooks = {});
  // The links of a disaggregated run, once run() has returned; null otherwise.
  const LinkNetwork* network() const { return engine_ ? engine_->network() : nullptr; }

 private:
  BuiltRun run_;
  std::optional<Engine> engine_;
};

}  // namespace servesim
