#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "tests/costmodels/home_profiles.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

TEST_CASE("the light stream fraction is the fitted one at home and rises toward the ceiling",
          "[costmodels][analytical]") {
  LightMemory m{696, 0, 1, 0.83, 0};
  CHECK(light_stream_fraction(0.15, m, 3) == 0.15);  // law off
  m.sm_ratio = 1;
  CHECK(light_stream_fraction(0.15, m, 3) == 0.15);
  double last = 0.15;
  for (const double r : {1.5, 2.0, 2.8, 5.0, 50.0}) {
    m.sm_ratio = r;
    const double f = light_stream_fraction(0.15, m, 3);
    CHECK(f > last);
    CHECK(f < 0.83);
    last = f;
  }
  // A kernel at or above the ceiling streams at its own fraction whatever the ratio.
  CHECK(light_stream_fraction(0.84, m, 3) == 0.84);
}

TEST_CASE("a light kernel is monotone in bytes and never below its launch floor",
          "[costmodels][analytical]") {
  const AnalyticalParams::Light l{2000, 0.15, 0.3};
  const AnalyticalTerms on;
  const LightMemory a40{696, 1e6, 2, 0.83, 2.8};
  double last = 0;
  for (double bytes = 0; bytes <= 1e9; bytes = bytes * 4 + 1024) {
    const double t = light_kernel_ns(l, {bytes, bytes / 8192, 2048, bytes / 2}, a40, 84, 3, on, 1);
    CHECK(t >= 2000);
    CHECK(t >= last);
    last = t;
  }
}

TEST_CASE("a hardware file without the light law's home bytes per SM clock names the key",
          "[costmodels][analytical]") {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/a40.yaml");
  std::string yaml, line;
  while (std::getline(in, line)) {
    if (line.find("home_bytes_per_sm_clk") == std::string::npos) yaml += line + "\n";
  }
  const ConfigNode n = ConfigNode::parse(yaml, "configs/hardware/a40.yaml");
  AnalyticalParams p;
  try {
    p.apply_analytical(n.at("analytical"), /*complete=*/true);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("configs/hardware/a40.yaml") &&
                         Catch::Contains("home_bytes_per_sm_clk"));
  }
}

TEST_CASE("the light law prices the A40 profiles within their targets, fitting nothing there",
          "[costmodels][accuracy]") {
  testing::require_vidur_profiles();
  const GpuSpec& g = testing::configs_gpu("a40");
  for (const auto& [model, limit] :
       {std::pair<std::string, double>{"meta-llama/Llama-2-7b-hf", 6}, {"microsoft/phi-2", 6}}) {
    INFO(model);
    const auto rows = read_vidur_mlp(testing::vidur_compute_dir() + "/a40/" + model + "/mlp.csv");
    const ProfileValidation v =
        validate_profile(rows, model, g, nullptr, AnalyticalParams::for_gpu(g), AnalyticalTerms{});
    CHECK(v.slices.front().block.mape() < limit);
    for (std::size_t i = 1; i < v.slices.size(); ++i) {
      INFO("TP" << v.slices[i].tp);
      CHECK(v.slices[i].block.mape() < (v.slices[i].tp == 8 ? 10.0 : limit));
    }
  }
}
