// Every transferred hardware file must hold the values its declared rules give from the home
// (A100-80GB) calibration: after `costmodel fit` rewrites the home file, this test fails until
// every other file is re-derived (nothing drifts silently).
#include <cmath>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/hardware/catalog.hpp"

using namespace servesim;

namespace {

// The two numbers of "<what> = A100 fit <home> x <ratio>" in a source text.
std::pair<double, double> rule(const std::string& source, const std::string& what) {
  const std::regex re(what + R"( = A100 fit ([0-9.]+) x ([0-9.]+))");
  std::smatch m;
  REQUIRE(std::regex_search(source, m, re));
  return {std::stod(m[1]), std::stod(m[2])};
}

}  // namespace

TEST_CASE("transferred hardware files hold what their rules derive from the home calibration",
          "[costmodels][catalog]") {
  Catalog catalog({std::string(SERVESIM_SOURCE_DIR) + "/configs"});
  const ConfigNode where = ConfigNode::parse("x", "test");
  const AnalyticalParams home = AnalyticalParams::for_gpu(catalog.gpu("a100-80gb", where));
  int checked = 0;
  for (const std::string& name : catalog.gpu_names()) {
    if (name == "a100-80gb") continue;
    INFO(name);
    const GpuSpec& gpu = catalog.gpu(name, where);
    const AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
    const std::string source = gpu.file.at("analytical").at("source").as_string();
    const auto [eff_home, eff_ratio] = rule(source, "gemm.efficiency");
    CHECK(eff_home == Approx(home.gemm_efficiency).margin(1e-4));
    CHECK(p.gemm_efficiency == Approx(home.gemm_efficiency * eff_ratio).margin(1e-4));
    const auto [eta_home, eta_ratio] = rule(source, "memory.eta_max");
    CHECK(eta_home == Approx(home.eta_max).margin(1e-4));
    CHECK(p.eta_max == Approx(home.eta_max * eta_ratio).margin(1e-4));
    CHECK(p.x_half == Approx(home.x_half).margin(1e-4));
    std::smatch m;
    REQUIRE(std::regex_search(source, m, std::regex(R"(boost-clock ratio 1410/([0-9]+))")));
    const double clock = 1410.0 / std::stod(m[1]);
    CHECK(std::stod(m[1]) == gpu.boost_clock_mhz);
    CHECK(p.wave_ns == Approx(home.wave_ns * clock).margin(1));
    for (std::size_t i = 0; i < kNumLightKernels; ++i) {
      INFO(light_kernel_name(static_cast<LightKernel>(i)));
      CHECK(p.light[i].floor_ns == Approx(home.light[i].floor_ns * clock).margin(1));
      CHECK(p.light[i].row_elem_ns == Approx(home.light[i].row_elem_ns * clock).margin(1e-4));
      CHECK(p.light[i].bw_fraction == Approx(home.light[i].bw_fraction * eta_ratio).margin(1e-4));
    }
    CHECK(p.light_l2_resident_fraction == home.light_l2_resident_fraction);
    CHECK(p.light_l2_speedup == home.light_l2_speedup);
    CHECK(p.gemm_launch_ns == home.gemm_launch_ns);
    CHECK(p.tiles == home.tiles);
    CHECK(p.split_k_min_k == home.split_k_min_k);
    CHECK(p.knee_q == home.knee_q);
    CHECK(p.ctas_per_sm == home.ctas_per_sm);
    CHECK(p.accumulator_budget == home.accumulator_budget);
    CHECK(p.lone_cta_utilization == home.lone_cta_utilization);
    CHECK(p.nvlink_efficiency == home.nvlink_efficiency);
    CHECK(p.pcie_efficiency == home.pcie_efficiency);
    CHECK(p.hop_latency_ns == home.hop_latency_ns);
    CHECK(p.collective_floor_ns == home.collective_floor_ns);
    // 1024-thread row CTAs per SM: 2048 threads on sm80/sm90/sm100, 1536 on sm86/sm89/sm120.
    const bool datacenter_blackwell =
        name == "b200" || name == "gb200" || name == "b300" || name == "gb300";
    const bool threads_1536 = name == "a40" || name == "a10g" || gpu.arch == "ada" ||
                              (gpu.arch == "blackwell" && !datacenter_blackwell);
    CHECK(p.row_ctas_per_sm == (threads_1536 ? 1 : 2));
    ++checked;
  }
  CHECK(checked == 18);
  CHECK(home.row_ctas_per_sm == 2);
}
