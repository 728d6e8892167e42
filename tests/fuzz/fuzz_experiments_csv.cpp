// Fuzzes sim2real's readers: the first byte picks experiments.csv (the run table) or a measured
// per-request trace; the rest is the file.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_contract.hpp"
#include "tools/sim2real/experiments.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace servesim;
  return fuzz::on_selected_file(data, size, ".csv", [](std::uint8_t selector, const auto& path) {
    if (selector % 2 == 0) {
      (void)sim2real::read_experiments(path);
    } else {
      (void)sim2real::read_trace(path);
    }
  });
}
