#include "costmodels/rf/spec_scaler.hpp"

#include <catch2/catch.hpp>

#include "../test_specs.hpp"

using namespace servesim;

namespace {

// Round numbers: home 100 TFLOP/s, 1000 GB/s; target 3× the compute, 1.5× the bandwidth.
GpuSpec gpu(double tflops, double gb_per_s) {
  GpuSpec g = testing::a100_like();
  g.bf16_tflops = tflops;
  g.memory_bw_gb_per_s = gb_per_s;
  return g;
}

}  // namespace

TEST_CASE("the roofline scaler gives memory-bound cells the bandwidth ratio", "[costmodels][rf]") {
  const GpuSpec home = gpu(100, 1000);
  const GpuSpec target = gpu(300, 1500);
  const ModelSpec m = testing::llama2_7b_like();
  const SpecScaler s(home, target, m, 1, SpecScaler::Mode::kRoofline);
  // One decode token through the 4096×12288 QKV GEMM: 2·4096·12288 FLOP against ~100 MB of
  // weights — memory-bound on both GPUs.
  CHECK(s.ratio(VidurOp::kAttnPreProj, 1) == Approx(1000.0 / 1500));
  // Light kernels and the embedding are always priced as memory traffic.
  CHECK(s.ratio(VidurOp::kInputLayernorm, 8192) == Approx(1000.0 / 1500));
  CHECK(s.ratio(VidurOp::kEmb, 8192) == Approx(1000.0 / 1500));
}

TEST_CASE("the roofline scaler gives compute-bound cells the peak ratio", "[costmodels][rf]") {
  const GpuSpec home = gpu(100, 1000);
  const GpuSpec target = gpu(300, 1500);
  const ModelSpec m = testing::llama2_7b_like();
  const SpecScaler s(home, target, m, 1, SpecScaler::Mode::kRoofline);
  CHECK(s.ratio(VidurOp::kMlpUpProj, 8192) == Approx(100.0 / 300));
  CHECK(s.ratio(VidurOp::kMlpDownProj, 8192) == Approx(100.0 / 300));
}

TEST_CASE(
    "a cell compute-bound at home but memory-bound on the target gets the roofline "
    "times' ratio",
    "[costmodels][rf]") {
  const GpuSpec home = gpu(100, 1000);
  const GpuSpec target = gpu(1000, 1000);  // 10× compute, same bandwidth
  const ModelSpec m = testing::llama2_7b_like();
  const SpecScaler s(home, target, m, 1, SpecScaler::Mode::kRoofline);
  // O projection 4096×4096 at 256 tokens: FLOPs 2·256·4096² = 8.59 GFLOP, bytes
  // 2·(256·4096·2 + 4096²) = 37.7 MB. Home: 85.9 µs compute vs 37.7 µs memory (compute-bound);
  // target: 8.59 µs vs 37.7 µs (memory-bound). Ratio 37.7 / 85.9.
  const double flops = 2.0 * 256 * 4096 * 4096;
  const double bytes = 2.0 * (256.0 * 4096 * 2 + 4096.0 * 4096);
  CHECK(s.ratio(VidurOp::kAttnPostProj, 256) == Approx((bytes / 1000) / (flops / 1e5)));
  CHECK(s.ratio(VidurOp::kAttnPostProj, 256) > 100.0 / 1000);
  CHECK(s.ratio(VidurOp::kAttnPostProj, 256) < 1.0);
}

TEST_CASE("the analytical scaler is the analytical model's target/home ratio per op",
          "[costmodels][rf]") {
  const GpuSpec home = testing::a100_like();
  const GpuSpec target = testing::h100_like();
  const ModelSpec m = testing::llama2_7b_like();
  const SpecScaler s(home, target, m, 2, SpecScaler::Mode::kAnalytical);
  ReplicaSpec rh = testing::replica_of(home, m, 2);
  rh.cuda_graphs = false;
  ReplicaSpec rt = testing::replica_of(target, m, 2);
  rt.cuda_graphs = false;
  const LayerPricer ph(rh, AnalyticalParams::for_gpu(home), AnalyticalTerms{});
  const LayerPricer pt(rt, AnalyticalParams::for_gpu(target), AnalyticalTerms{});
  for (double tokens : {1.0, 64.0, 2048.0}) {
    const auto i = static_cast<std::size_t>(VidurOp::kMlpUpProj);
    CHECK(s.ratio(VidurOp::kMlpUpProj, tokens) ==
          Approx(pt.vidur_ops_ns(tokens)[i] / ph.vidur_ops_ns(tokens)[i]));
  }
  CHECK(s.collective_ratio() == Approx(600.0 / 900));
}
