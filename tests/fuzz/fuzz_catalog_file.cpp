// Fuzzes the catalog file loaders: the first byte picks a hardware file, a model file or an
// engine profile; the rest is its YAML, parsed as if it stood in configs/ (so relative names
// resolve as they do for shipped files).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "sim/config/config_node.hpp"
#include "sim/hardware/catalog.hpp"
#include "tests/fuzz/fuzz_contract.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace servesim;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  fuzz::within_contract([&] {
    switch (data[0] % 3) {
      case 0: {
        const GpuSpec gpu = Catalog::load_gpu(
            ConfigNode::parse(text, SERVESIM_SOURCE_DIR "/configs/hardware/x.yaml"));
        (void)AnalyticalParams::for_gpu(gpu);  // the cost model's constants in the same file
        break;
      }
      case 1:
        (void)Catalog::load_model(
            ConfigNode::parse(text, SERVESIM_SOURCE_DIR "/configs/models/x.yaml"));
        break;
      default:
        (void)EngineProfile::parse(
            ConfigNode::parse(text, SERVESIM_SOURCE_DIR "/configs/engines/x.yaml"));
        break;
    }
  });
  return 0;
}
