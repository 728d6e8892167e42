// Speed of CostModel::step(): ns per call for decode batches of 1–256 requests and prefill
// chunks of 64–8192 tokens, per registered cost model, on an A100-80GB / Llama-2-7B replica.
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "costmodels/registry.hpp"
#include "sim/catalog.hpp"
#include "sim/input_error.hpp"

int main() {
  using namespace servesim;
  Catalog catalog(Catalog::default_dirs());
  const ConfigNode where = ConfigNode::parse("x", "bench");
  ReplicaSpec r;
  r.gpu = &catalog.gpu("a100", where);
  r.model = &catalog.model("meta-llama/Llama-2-7b-hf", where);
  r.tp = 1;
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
  for (const std::string& kind : cost_model_kinds()) {
    std::unique_ptr<CostModel> cm;
    try {
      cm = make_cost_model(ConfigNode::parse("kind: " + kind, "bench"));
    } catch (const InputError& e) {  // a kind that needs more configuration than `kind:`
      fmt::print("{:<12} skipped: {}\n", kind, e.what());
      continue;
    }
    (void)cm->step(cases.front().second, r);  // builds per-replica tables
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
