// Weight and KV formats as physics: bytes per parameter with scales, by hand for Llama-3.1-8B;
// the tensor-core rate each format's GEMMs run at; a format a GPU cannot run is refused.
#include <string>

#include <catch2/catch.hpp>

#include "sim/hardware/catalog.hpp"
#include "sim/hardware/memory_planner.hpp"

using namespace servesim;

namespace {
Catalog& format_catalog() {
  static Catalog cat(Catalog::default_dirs());
  return cat;
}

ReplicaSpec llama8b_on(const std::string& gpu, Precision weights, double kv_bytes = 2.0) {
  const ConfigNode here = ConfigNode::flag("test");
  ReplicaSpec r;
  r.gpu = &format_catalog().gpu(gpu, here);
  r.model = &format_catalog().model("meta-llama/Llama-3.1-8B", here);
  r.weights = weights;
  r.kv_dtype_bytes = kv_bytes;
  return r;
}
}  // namespace

TEST_CASE("each weight format's bytes per parameter counts its scales", "[precision]") {
  CHECK(precision_format(Precision::kBf16).bytes_per_param == 2.0);
  CHECK(precision_format(Precision::kFp8).bytes_per_param == 1.0);
  // One fp32 scale per 128 × 128 block.
  CHECK(precision_format(Precision::kFp8Block).bytes_per_param == Approx(1.000244140625));
  // Four bits and an FP8 scale per 16 values.
  CHECK(precision_format(Precision::kNvfp4).bytes_per_param == 0.5625);
  // Four bits and an E8M0 scale per 32 values.
  CHECK(precision_format(Precision::kMxfp4).bytes_per_param == 0.53125);
  // Four bits, an fp16 scale and a 4-bit zero per 128 values.
  CHECK(precision_format(Precision::kInt4).bytes_per_param == Approx(0.51953125));
  CHECK(precision_named("fp16") == Precision::kBf16);
  CHECK(precision_named("nvfp4") == Precision::kNvfp4);
  CHECK_FALSE(precision_named("fp6").has_value());
}

TEST_CASE("Llama-3.1-8B's weight and KV bytes at each format, by hand", "[precision][memory]") {
  // Llama-3.1-8B: 32 layers, hidden 4096, 32 q heads and 8 KV heads of 128, MLP 14336, vocab
  // 128256, untied: per layer 4096 × (4096 + 2 × 1024 + 4096) + 3 × 4096 × 14336 = 218,103,808
  // parameters; embeddings and LM head 2 × 128256 × 4096 = 1,050,673,152, kept in bf16.
  const double layers = 32 * 218103808.0;
  const double tables = 2 * 128256 * 4096.0;
  const auto weights = [&](Precision p) {
    return plan_kv_memory(llama8b_on("b200", p), 0.9, 16, 8192, 256).weight_bytes;
  };
  CHECK(weights(Precision::kBf16) == Approx((layers + tables) * 2));
  CHECK(weights(Precision::kFp8) == Approx(layers * 1 + tables * 2));
  CHECK(weights(Precision::kNvfp4) == Approx(layers * 0.5625 + tables * 2));
  CHECK(weights(Precision::kMxfp4) == Approx(layers * 0.53125 + tables * 2));
  CHECK(weights(Precision::kInt4) == Approx(layers * 0.51953125 + tables * 2));
  // NVFP4 holds 6.03 GB of weights where bf16 holds 16.06 GB.
  CHECK(weights(Precision::kNvfp4) / 1e9 == Approx(6.03).epsilon(0.01));
  // KV per token: 32 layers × 2 (K, V) × 8 heads × 128 × 2 bytes = 131,072 bytes; FP8 half.
  const MemoryPlan bf16_kv =
      plan_kv_memory(llama8b_on("b200", Precision::kFp8), 0.9, 16, 8192, 256);
  const MemoryPlan fp8_kv =
      plan_kv_memory(llama8b_on("b200", Precision::kFp8, 1.0), 0.9, 16, 8192, 256);
  CHECK(bf16_kv.block_bytes == Approx(131072.0 * 16));
  CHECK(fp8_kv.block_bytes == Approx(65536.0 * 16));
  // The same memory holds twice the blocks (to the block).
  CHECK(std::abs(fp8_kv.num_blocks - 2 * bf16_kv.num_blocks) <= 1);
}

TEST_CASE("each format's GEMMs run at the rate of the tensor cores that serve it", "[precision]") {
  const ConfigNode here = ConfigNode::flag("test");
  const GpuSpec& b200 = format_catalog().gpu("b200", here);
  const GpuSpec& h100 = format_catalog().gpu("h100-sxm", here);
  const GpuSpec& a100 = format_catalog().gpu("a100-80gb", here);
  CHECK(b200.gemm_flop_per_ns(Precision::kNvfp4) == 9000e3);  // 9000 TFLOP/s dense
  CHECK(b200.gemm_flop_per_ns(Precision::kFp8Block) == 4500e3);
  CHECK(b200.gemm_flop_per_ns(Precision::kMxfp4) == 4500e3);                   // W4A8: the FP8 rate
  CHECK(h100.gemm_flop_per_ns(Precision::kMxfp4) == h100.bf16_flop_per_ns());  // weight-only
  CHECK(h100.gemm_flop_per_ns(Precision::kInt4) == h100.bf16_flop_per_ns());
  CHECK(b200.precision_problem(Precision::kNvfp4).empty());
  CHECK(h100.precision_problem(Precision::kMxfp4).empty());
  CHECK_THAT(h100.precision_problem(Precision::kNvfp4),
             Catch::Contains("GPU 'h100-sxm' has no FP4 tensor cores"));
  CHECK_THAT(a100.precision_problem(Precision::kFp8Block),
             Catch::Contains("GPU 'a100-80gb' has no FP8 tensor cores"));
  CHECK(a100.precision_problem(Precision::kInt4).empty());
}
