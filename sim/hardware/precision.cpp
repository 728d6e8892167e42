#include "sim/hardware/precision.hpp"

#include <array>

namespace servesim {
namespace {

constexpr std::array<PrecisionFormat, 6> kFormats{{
    {Precision::kBf16, "bf16", 2.0},
    {Precision::kFp8, "fp8", 1.0},
    {Precision::kFp8Block, "fp8_block", 1.0 + 4.0 / (128.0 * 128.0)},
    {Precision::kNvfp4, "nvfp4", 0.5 + 1.0 / 16.0},
    {Precision::kMxfp4, "mxfp4", 0.5 + 1.0 / 32.0},
    {Precision::kInt4, "int4", 0.5 + 2.5 / 128.0},
}};

}  // namespace

const PrecisionFormat& precision_format(Precision p) {
  return kFormats[static_cast<std::size_t>(p)];
}

std::optional<Precision> precision_named(std::string_view name) {
  if (name == "fp16") return Precision::kBf16;
  for (const auto& f : kFormats) {
    if (f.name == name) return f.precision;
  }
  return std::nullopt;
}

std::string precision_names() {
  std::string out;
  for (const auto& f : kFormats) {
    out += out.empty() ? "" : ", ";
    out += f.name;
    if (f.precision == Precision::kBf16) out += ", fp16";
  }
  return out;
}

}  // namespace servesim
