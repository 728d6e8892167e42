// bench_costmodel [--profiles DIR] [--kind K]...
// Speed of CostModel::step(): ns per call for decode batches of 1–256 requests and prefill
// chunks of 64–8192 tokens, per registered cost model, on an A100-80GB / Llama-2-7B replica.
// The Random-Forest kinds (rf, rf_scaled) train on the A100 folder of the Vidur profile in
// --profiles (or load their cache); the time that takes is printed as "setup", apart from the
// per-step numbers.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "costmodels/registry.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "tools/common/tool_main.hpp"

namespace {

namespace fs = std::filesystem;
using namespace servesim;

// The `cost_model:` section that makes `kind` runnable: the RF kinds need the home GPU and the
// profile folder; the others run on their defaults.
std::string section_for(const std::string& kind, const fs::path& profiles) {
  if (find_cost_model(kind)->capabilities.needs_profiles) {
    return fmt::format("{{kind: {}, gpu: a100, profiles: \"{}\"}}", kind,
                       fs::absolute(profiles).string());
  }
  return fmt::format("{{kind: {}}}", kind);
}

int run(const fs::path& profiles, const std::vector<std::string>& kinds, const std::string& gpu,
        double cap_w) {
  Catalog catalog(Catalog::default_dirs());
  const ConfigNode where = ConfigNode::parse("x", "bench");
  ReplicaSpec r;
  r.gpu = &catalog.gpu(gpu, where);
  r.model = &catalog.model("meta-llama/Llama-2-7b-hf", where);
  r.tp = 1;
  r.power_cap_w = cap_w;
  std::vector<std::pair<std::string, BatchShape>> cases;
  for (int n : {1, 8, 32, 64, 128, 256}) {
    BatchShape b;
    for (int i = 0; i < n; ++i) b.decode_contexts.push_back(500 + 7 * i);
    cases.emplace_back(fmt::format("decode x{}", n), b);
  }
  for (int c : {64, 256, 1024, 4096, 8192}) {
    BatchShape b;
    b.prefills.push_back({c, 128});
    b.decode_contexts.assign(8, 1000);
    cases.emplace_back(fmt::format("prefill {} + 8 decodes", c), b);
  }
  for (const std::string& kind : kinds.empty() ? cost_model_kinds() : kinds) {
    const std::string section = section_for(kind, profiles);
    std::unique_ptr<CostModel> cm;
    const auto s0 = std::chrono::steady_clock::now();
    try {
      cm = make_cost_model(ConfigNode::parse(section, "bench"));
      (void)cm->step(cases.front().second, r);  // builds per-replica tables (RF: trains or loads)
    } catch (const InputError& e) {             // e.g. no profile at --profiles
      fmt::print("{:<12} skipped: {}\n", kind, e.what());
      continue;
    }
    const double setup_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    fmt::print("{:<12} setup {:.2f} s  ({})\n", kind, setup_s, section);
    for (const auto& [label, batch] : cases) {
      std::vector<double> samples;
      SimTime sink = 0;
      for (int rep = 0; rep < 21; ++rep) {
        constexpr int kIters = 2000;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kIters; ++i) sink += cm->step(batch, r).total_ns;
        const auto t1 = std::chrono::steady_clock::now();
        samples.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kIters);
      }
      std::nth_element(samples.begin(), samples.begin() + 10, samples.end());
      fmt::print("{:<12} {:<26} median {:8.1f} ns/step  (step {:.3f} ms, checksum {})\n", kind,
                 label, samples[10], static_cast<double>(cm->step(batch, r).total_ns) / 1e6,
                 sink % 7);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"servesim cost-model benchmark: ns per CostModel::step() call"};
  std::string profiles = (fs::path(SERVESIM_SOURCE_DIR) / "data/vidur/profiling/compute").string();
  std::vector<std::string> kinds;
  app.add_option("--profiles", profiles,
                 "Vidur profiling/compute folder the rf and rf_scaled kinds train on");
  app.add_option("--kind", kinds, "Cost-model kinds to time (repeatable; default every kind)")
      ->check(CLI::IsMember(cost_model_kinds()));
  std::string gpu = "a100";
  double cap_w = 0;
  app.add_option("--gpu", gpu,
                 "GPU the analytical kinds price on (default a100; rtx-5090 has a power model, "
                 "so its steps are priced with energy and, under --power-cap-w, per-kernel "
                 "clocks)");
  app.add_option("--power-cap-w", cap_w, "board cap (default: the TDP)")
      ->check(CLI::NonNegativeNumber);
  return tool_main(app, argc, argv, std::cout, std::cerr,
                   [&] { return run(profiles, kinds, gpu, cap_w); });
}
