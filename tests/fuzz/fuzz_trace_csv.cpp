// Fuzzes the trace readers: the first byte picks the format (Vidur, Azure, measured, or a
// lengths-only file whose columns decide), the rest is the CSV file. Every row is read to the end.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_contract.hpp"
#include "workloads/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace servesim;
  return fuzz::on_selected_file(data, size, ".csv", [](std::uint8_t selector, const auto& path) {
    constexpr TraceFormat kFormats[] = {TraceFormat::kVidur, TraceFormat::kAzure,
                                        TraceFormat::kMeasured};
    const int pick = selector % 4;
    TraceReader reader =
        pick < 3 ? TraceReader(path, kFormats[pick]) : TraceReader::lengths_only(path);
    TraceRow row;
    while (reader.next(row)) {
    }
  });
}
