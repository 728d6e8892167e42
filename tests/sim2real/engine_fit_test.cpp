// The engine fit over the measured runs: a test of its own, started first by CTest (COST), since
// under the sanitizers it runs for minutes and would otherwise end the suite alone.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/analytical/engine_profile.hpp"
#include "sim/config/config_node.hpp"
#include "sim/hardware/catalog.hpp"
#include "tests/sim2real/experiments_data.hpp"
#include "tools/sim2real/experiments.hpp"
#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/replay.hpp"

using namespace servesim;
using namespace servesim::sim2real;

TEST_CASE("the engine fit reproduces the shipped profiles", "[sim2real][fit][data]") {
  const std::string csv = test::experiments_csv();
  const std::vector<Experiment> runs = read_experiments(csv);
  std::set<std::string> held_out;
  for (const std::string id : {"tv-l2-7b-general", "5"}) held_out.insert(id);
  REQUIRE(default_held_out() == "tv-l2-7b-general,5");
  const FitResult f = fit_engine_constants(runs, held_out, ReplayOptions{}, csv);
  CHECK(f.runs.size() == 3);
  Catalog catalog(Catalog::default_dirs());
  const GpuSpec& gpu = catalog.gpu(f.gpu, ConfigNode::parse("x", "test"));
  REQUIRE(f.constants.request_overhead_ns.size() == 2);
  for (const auto& [name, overhead] : f.constants.request_overhead_ns) {
    INFO(name);
    const auto shipped = EngineProfile::load(ConfigNode::parse(name, "test"));
    CHECK(overhead == Approx(shipped->request_overhead_ns).margin(1e3));
    AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
    shipped->apply(gpu, p);
    CHECK(f.constants.graph_floor_ns == Approx(p.host_graph_floor_ns).margin(1e3));
    CHECK(f.constants.eager_floor_ns == Approx(p.host_eager_floor_ns).margin(1e3));
    CHECK(f.constants.decode_bw_fraction == Approx(p.decode_attn_bw_fraction).margin(1e-3));
  }
}
