#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace servesim {

// The storage format of a replica's quantized weights (the linear layers of its blocks; the
// embeddings, LM head and MoE routers stay bf16, see ModelSpec::unquantized_params).
enum class Precision { kBf16, kFp8, kFp8Block, kNvfp4, kMxfp4, kInt4 };

// What a weight format costs in memory: bytes per parameter with its scale factors. Which
// tensor-core rate its GEMMs run at depends on the GPU (GpuSpec::gemm_flop_per_ns).
struct PrecisionFormat {
  Precision precision;
  std::string_view name;
  // Stored bytes per quantized parameter, scales included:
  //   fp8        1 (one fp32 scale per tensor: nothing per parameter);
  //   fp8_block  1 + 4 / (128 × 128) (an fp32 scale per 128 × 128 block, DeepSeek-V3 recipe);
  //   nvfp4      0.5 + 1 / 16 (an FP8 E4M3 scale per 16 values, plus one fp32 per tensor);
  //   mxfp4      0.5 + 1 / 32 (an E8M0 scale per 32 values, OCP Microscaling spec v1.0);
  //   int4       0.5 + (2 + 0.5) / 128 (AWQ/GPTQ groups of 128: an fp16 scale and a 4-bit zero).
  double bytes_per_param;
};

const PrecisionFormat& precision_format(Precision p);
inline std::string_view precision_name(Precision p) { return precision_format(p).name; }
// bf16 (fp16 is an alias: same bytes and tensor-core rate), fp8, fp8_block, nvfp4, mxfp4, int4;
// none for anything else.
std::optional<Precision> precision_named(std::string_view name);
// The names precision_named() knows, for messages.
std::string precision_names();

}  // namespace servesim
