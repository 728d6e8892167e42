#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/analytical/collective_model.hpp"
#include "costmodels/analytical/gemm_model.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/attention_work.hpp"
#include "costmodels/roofline/roofline_cost_model.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/link_network.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

TEST_CASE("a per-token light kernel adds its serial row walk, once per wave of resident rows",
          "[costmodels][analytical]") {
  const AnalyticalParams::Light l{1000, 0.5, 0.5};
  const AnalyticalTerms on;
  const LightMemory dram{2, 0, 1};  // 2 bytes/ns, nothing held in L2
  // 300 rows on 216 row slots: two waves of a 2048-element row at 0.5 ns per element.
  const double t_lat = 1000 + 0.5 * 2048 * 2;
  const double t_bw = 1000 / (2 * 0.5);
  CHECK(light_kernel_ns(l, {1000, 300, 2048}, dram, 216, 3, on, 1.0) ==
        Approx(std::cbrt(t_lat * t_lat * t_lat + t_bw * t_bw * t_bw)));
  // 216 rows fit one wave.
  CHECK(light_kernel_ns(l, {1000, 216, 2048}, dram, 216, 3, on, 1.0) ==
        Approx(std::cbrt(std::pow(1000 + 1024.0, 3) + std::pow(t_bw, 3))));
  // An elementwise kernel (no row) is the floor against the stream; a CUDA graph scales only
  // the launch floor, not the row walk.
  CHECK(light_kernel_ns(l, {1000, 300, 0}, dram, 216, 3, on, 1.0) ==
        Approx(std::cbrt(1e9 + std::pow(t_bw, 3))));
  CHECK(light_kernel_ns(l, {1000, 1, 2048}, dram, 216, 3, on, 0.5) ==
        Approx(std::cbrt(std::pow(500 + 1024.0, 3) + std::pow(t_bw, 3))));
  // Without the launch term the kernel only streams.
  AnalyticalTerms no_launch;
  no_launch.launch = false;
  CHECK(light_kernel_ns(l, {1000, 300, 2048}, dram, 216, 3, no_launch, 1.0) == Approx(t_bw));
}

TEST_CASE(
    "a light kernel reads the input the op before wrote from L2 up to the resident bytes and the "
    "rest from DRAM",
    "[costmodels][analytical]") {
  const AnalyticalParams::Light l{0, 0.5, 0};
  AnalyticalTerms bw_only;
  bw_only.launch = false;          // the stream alone
  const LightMemory m{2, 400, 4};  // 2 bytes/ns; 400 bytes held in L2, read 4x faster
  // 1000 bytes of which 300 are the just-written input: all 300 come from L2.
  CHECK(light_kernel_ns(l, {1000, 1, 0, 300}, m, 216, 3, bw_only, 1.0) ==
        Approx(700 / 1.0 + 300 / 4.0));
  // A 600-byte input overflows the 400 resident bytes: 200 more come from DRAM.
  CHECK(light_kernel_ns(l, {1000, 1, 0, 600}, m, 216, 3, bw_only, 1.0) ==
        Approx(600 / 1.0 + 400 / 4.0));
  // No reuse, or the term off: every byte from DRAM.
  CHECK(light_kernel_ns(l, {1000, 1, 0, 0}, m, 216, 3, bw_only, 1.0) == Approx(1000.0));
  AnalyticalTerms no_l2 = bw_only;
  no_l2.light_l2 = false;
  CHECK(light_kernel_ns(l, {1000, 1, 0, 300}, m, 216, 3, no_l2, 1.0) == Approx(1000.0));
  // light_memory: the resident share of the GPU's L2 (MiB) and its speedup.
  const GpuSpec gpu = testing::a100_like();
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  p.light_l2_resident_fraction = 0.25;
  p.light_l2_speedup = 3;
  const LightMemory g = light_memory(gpu, p);
  CHECK(g.bw == gpu.memory_bw_gb_per_s);
  CHECK(g.l2_resident_bytes == Approx(0.25 * 40 * 1048576.0));
  CHECK(g.l2_speedup == 3);
}

TEST_CASE("RMSNorm, RoPE and SiLU-and-mul walk their row, so wider rows cost more at decode",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  for (LightKernel k : {LightKernel::kRmsNorm, LightKernel::kRope, LightKernel::kSiluMul}) {
    p.light[static_cast<std::size_t>(k)].row_elem_ns = 0.5;
  }
  const ModelSpec m = testing::llama2_7b_like();
  auto act_ns = [&](int tp) {
    const LayerPricer pr(testing::replica_of(gpu, m, tp), p, AnalyticalTerms{});
    const auto uses = pr.vidur_light_uses(1);
    const auto& act = uses[static_cast<std::size_t>(VidurOp::kMlpAct)];
    CHECK(act.work.row_elems == Approx(11008.0 / tp));
    CHECK(uses[static_cast<std::size_t>(VidurOp::kInputLayernorm)].work.row_elems == 4096);
    CHECK(uses[static_cast<std::size_t>(VidurOp::kAttnRope)].work.row_elems ==
          (32 + 32) / tp * 128);
    CHECK(uses[static_cast<std::size_t>(VidurOp::kAdd)].work.row_elems == 0);
    return pr.vidur_ops_ns(1)[static_cast<std::size_t>(VidurOp::kMlpAct)];
  };
  // One token: the floor plus 0.5 ns per element of the TP shard's intermediate row.
  CHECK(act_ns(1) ==
        Approx(p.light[static_cast<std::size_t>(LightKernel::kSiluMul)].floor_ns + 0.5 * 11008)
            .epsilon(1e-3));
  CHECK(act_ns(1) > act_ns(2));
  CHECK(act_ns(2) > act_ns(8));
}

TEST_CASE("the row walk repeats once per wave of SMs times row CTAs per SM and has its own switch",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  // RMSNorm as a pure row walk: no floor, a negligible stream, 1 ns per element of the row.
  p.light[static_cast<std::size_t>(LightKernel::kRmsNorm)] = {0, 1e9, 1.0};
  const ModelSpec m = testing::llama2_7b_like();
  const std::size_t norm = static_cast<std::size_t>(VidurOp::kInputLayernorm);
  const double slots = gpu.sms * p.row_ctas_per_sm;
  const LayerPricer pr(testing::replica_of(gpu, m, 1), p, AnalyticalTerms{});
  CHECK(pr.vidur_ops_ns(slots)[norm] == Approx(4096).epsilon(1e-6));
  CHECK(pr.vidur_ops_ns(slots + 1)[norm] == Approx(2 * 4096).epsilon(1e-6));
  p.row_ctas_per_sm = 1;
  const LayerPricer one(testing::replica_of(gpu, m, 1), p, AnalyticalTerms{});
  CHECK(one.vidur_ops_ns(slots)[norm] == Approx(2 * 4096).epsilon(1e-6));
  AnalyticalTerms no_walk;
  no_walk.row_walk = false;
  const LayerPricer off(testing::replica_of(gpu, m, 1), p, no_walk);
  CHECK(off.vidur_ops_ns(slots)[norm] < 1);
}

TEST_CASE(
    "the norms and the residual add read their just-written input from L2 and the activation "
    "and RoPE do not",
    "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  p.light_l2_resident_fraction = 0.25;
  p.light_l2_speedup = 2;
  const ModelSpec m = testing::llama2_7b_like();
  AnalyticalTerms no_l2;
  no_l2.light_l2 = false;
  const LayerPricer on(testing::replica_of(gpu, m, 1), p, AnalyticalTerms{});
  const LayerPricer off(testing::replica_of(gpu, m, 1), p, no_l2);
  auto op = [](VidurOp o) { return static_cast<std::size_t>(o); };
  // 512 tokens of hidden 4096: a 4 MiB input, inside a quarter of the 40 MiB L2.
  const auto with = on.vidur_ops_ns(512);
  const auto without = off.vidur_ops_ns(512);
  for (VidurOp o : {VidurOp::kInputLayernorm, VidurOp::kPostAttentionLayernorm, VidurOp::kAdd}) {
    INFO(vidur_op_name(o));
    CHECK(with[op(o)] < without[op(o)]);
  }
  for (VidurOp o : {VidurOp::kMlpAct, VidurOp::kAttnRope, VidurOp::kEmb, VidurOp::kMlpUpProj}) {
    INFO(vidur_op_name(o));
    CHECK(with[op(o)] == without[op(o)]);
  }
  // With no resident share the term changes nothing.
  p.light_l2_resident_fraction = 0;
  const LayerPricer none(testing::replica_of(gpu, m, 1), p, AnalyticalTerms{});
  CHECK(none.vidur_ops_ns(512)[op(VidurOp::kAdd)] == without[op(VidurOp::kAdd)]);
}
