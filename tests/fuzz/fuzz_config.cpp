// Fuzzes a run config the way `simulate` reads one: the input is YAML, then NUL-separated
// `--set` assignments. It is parsed as if it stood in configs/ (relative paths resolve as for the
// shipped examples), validated by RunConfig, built (catalog, cost model, fleet, workload) and run
// with at most 16 requests and no outputs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "run/run_builder.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/run_config.hpp"
#include "tests/fuzz/fuzz_contract.hpp"

namespace {

constexpr std::int64_t kMaxRequests = 16;

// A run of any size becomes one of at most kMaxRequests requests (a long run is not a defect).
void bound_requests(servesim::ConfigNode& root) {
  if (!root.is_map()) return;
  const auto workload = root.find("workload");
  if (!workload || !workload->is_map()) return;
  const auto n = workload->find("num_requests");
  if (n && n->as_int() <= kMaxRequests) return;
  root.apply_override("workload.num_requests=" + std::to_string(kMaxRequests), "--set (fuzz)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace servesim;
  static RunCache cache;  // catalogs and cost models, as a sweep shares them between its runs
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t nul = input.find('\0', start);
    parts.push_back(input.substr(start, nul - start));
    if (nul == std::string::npos) break;
    start = nul + 1;
  }
  fuzz::within_contract([&] {
    ConfigNode root = ConfigNode::parse(parts[0], SERVESIM_SOURCE_DIR "/configs/fuzz.yaml");
    for (std::size_t i = 1; i < parts.size(); ++i) root.apply_override(parts[i], "--set");
    bound_requests(root);
    const RunConfig config = RunConfig::parse(root, std::nullopt);
    Simulation sim(config, &cache);
    RunOptions options;
    options.write_outputs = false;
    (void)execute_run(sim, options);
  });
  return 0;
}
