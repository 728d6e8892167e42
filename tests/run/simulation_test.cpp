// Simulation (run/simulation.hpp): the one place an Engine is made from a config. What it wires
// from the config reaches the engine whatever hooks a command sets, the hooks change only what
// they say, and a run is the same bytes however it is reached.
#include "run/simulation.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "run/step_kind_scaled_cost_model.hpp"
#include "sim/output/metrics.hpp"

namespace servesim {
namespace {

// Every step's duration, in order.
struct StepTimes final : RunObserver {
  void on_step(const StepRecord& s, const BatchShape&, const StepCost&) override {
    ns.push_back(s.duration_ns);
  }
  std::vector<SimTime> ns;
};

RunConfig config_of(const std::string& path, std::vector<std::string> sets) {
  return load_run_config(path, sets, std::nullopt);
}

}  // namespace

TEST_CASE("a Simulation wires the config's speculation under any cost-model hook", "[simulation]") {
  const RunConfig config =
      config_of("configs/h100_speculative_llama3_8b.yaml", {"workload.num_requests=40"});
  // A hook wraps the built cost model, as --bands and --sensitivity do: the engine still gets
  // the speculation (a hand-made engine without it refuses a step that verifies drafts).
  Simulation plain(config);
  const EngineTotals t = plain.run();
  Simulation wrapped(config);
  const ScaledCostModel scaled(wrapped.cost_model(), 1.0);
  const EngineTotals w = wrapped.run({.cost_model = &scaled});
  CHECK(t.spec_steps > 0);
  CHECK(t.spec_accepted > 0);
  CHECK(w.spec_steps == t.spec_steps);
  CHECK(w.spec_accepted == t.spec_accepted);
  CHECK(w.end_time == t.end_time);
}

TEST_CASE("a cost-model hook prices every step and nothing else", "[simulation]") {
  const RunConfig config = config_of("tests/tools/configs/golden_fixed.yaml", {});
  StepTimes base, doubled;
  Simulation a(config);
  a.run({.observers = {&base}});
  Simulation b(config);
  const ScaledCostModel scaled(b.cost_model(), 2.0);
  b.run({.cost_model = &scaled, .observers = {&doubled}});
  REQUIRE(!base.ns.empty());
  // The fixed cost model prices a step by its shape alone; the doubled run may batch otherwise,
  // so compare the first step, which both form from the same first arrival.
  CHECK(doubled.ns.front() == 2 * base.ns.front());
}

TEST_CASE("a Simulation runs once", "[simulation]") {
  Simulation sim(config_of("tests/tools/configs/golden_fixed.yaml", {}));
  sim.run();
  CHECK_THROWS_AS(sim.run(), std::logic_error);
}

TEST_CASE("execute_run's summary is the same bytes from one Simulation or another",
          "[simulation]") {
  const RunConfig config =
      config_of("configs/pd_h100_llama3_8b.yaml", {"workload.num_requests=60"});
  RunOptions options;
  options.write_outputs = false;
  Simulation first(config);
  Simulation second(config);
  const nlohmann::json a = execute_run(first, options);
  const nlohmann::json b = execute_run(second, options);
  CHECK(a.dump() == b.dump());
  // A disaggregated run: the transfers the wired decode router caused are in the summary.
  CHECK(a["disaggregation"]["transfers"].get<std::int64_t>() > 0);
}

}  // namespace servesim
