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

TEST_CASE("wave efficiency on a non-persistent GPU counts tiles, waves and padding",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();  // 108 SMs
  AnalyticalParams p;
  p.tiles = {{128, 128}};
  // 1024×4096 → 8·32 = 256 tiles over 108 slots = 3 waves (324 slots): η = 256/324.
  GemmLaunch l = plan_gemm({1024, 4096, 4096, 1}, gpu, p, true, false);
  CHECK(l.tiles == 256);
  CHECK(l.eta_wave == Approx(256.0 / 324.0));
  // 100×4096: padding to 128 rows as well: η = 100·4096 / (1 wave·108·128·128).
  l = plan_gemm({100, 4096, 4096, 1}, gpu, p, true, false);
  CHECK(l.tiles == 32);
  CHECK(l.eta_wave == Approx(100.0 * 4096 / (108.0 * 128 * 128)));
  // Split-K fills idle SMs: 32 tiles × 2 (K/2 = 2048 ≥ 256) = 64 ≤ 108; ×4 = 128 > 108.
  l = plan_gemm({100, 4096, 4096, 1}, gpu, p, true, true);
  CHECK(l.split_k == 2);
  CHECK(l.eta_wave == Approx(2 * 100.0 * 4096 / (108.0 * 128 * 128)));
}

TEST_CASE("the Hopper cluster-16 cap is 112 SMs on the (18×6, 16, 8) layout",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::h100_like();
  CHECK(cluster_capacity(gpu, 16) == 112);
  CHECK(cluster_capacity(gpu, 8) == 120);
  CHECK(cluster_capacity(gpu, 1) == 132);
  AnalyticalParams p;
  p.launch_model = LaunchModel::kCluster;
  p.cluster_size = 16;
  p.tiles = {{128, 256}};
  // Llama-70B gate_up at M = 32768 (N = 2·28672): 57,344 tiles of 128×256, but only 112 CTAs
  // launch (PHYSICS §2a).
  const GemmLaunch l = plan_gemm({32768, 8192, 57344, 1}, gpu, p, true, false);
  CHECK(l.tiles == 57344);
  CHECK(l.launched == 112);
  // 256·112 tiles exactly: η = (112/132) · tail(256) = 112/132.
  const GemmLaunch exact = plan_gemm({128.0 * 256, 4096, 256.0 * 112, 1}, gpu, p, true, false);
  CHECK(exact.tiles == 256.0 * 112);
  CHECK(exact.eta_wave == Approx(112.0 / 132.0));
}

TEST_CASE("the L2-reuse law equals a fixed cost plus bytes at the plateau bandwidth",
          "[costmodels][analytical]") {
  AnalyticalParams p;
  p.eta_max = 0.9;
  p.x_half = 0.477;
  const double l2 = 40.0 * 1048576;
  const double bw = 2039;  // bytes/ns
  for (double bytes : {1e6, 3e7, 4e8}) {
    const double lhs = bytes / (bw * eta_mem(bytes, l2, p));
    const double rhs = (bytes + p.x_half * l2) / (p.eta_max * bw);
    CHECK(lhs == Approx(rhs).epsilon(1e-12));
  }
  CHECK(eta_mem(p.x_half * l2, l2, p) == Approx(0.45));
}

TEST_CASE(
    "a ring all-reduce costs a floor, 2(p-1) hops and 2(p-1)/p bytes over the slowest link, "
    "vLLM's custom one its own floor",
    "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();  // NVLink 600 GB/s bidirectional, PCIe 32
  AnalyticalParams p;
  p.nvlink_efficiency = 0.5;
  p.pcie_efficiency = 0.75;
  p.hop_latency_ns = 4000;
  p.collective_floor_ns = 30000;
  const TpTopology nv(8, "nvlink", gpu, p);
  CHECK(nv.ring_bottleneck_bytes_per_ns() == Approx(150));
  CHECK(nv.all_reduce_ns(1e8) == Approx(30000 + 2 * 7.0 / 8 * 1e8 / 150 + 14 * 4000));
  CHECK_FALSE(nv.has_nvls());  // an A100's NVSwitch does not multicast
  CHECK(nv.algorithm(1e8) == TpTopology::Algorithm::kRing);
  // Pairwise NVLink: the 1→2 hop is PCIe, which bounds the ring of 4.
  const TpTopology pair4(4, "pairwise_nvlink", gpu, p);
  CHECK(pair4.ring_bottleneck_bytes_per_ns() == Approx(24));
  const TpTopology pair2(2, "pairwise_nvlink", gpu, p);
  CHECK(pair2.ring_bottleneck_bytes_per_ns() == Approx(150));
  CHECK(TpTopology(1, "nvlink", gpu, p).all_reduce_ns(1e9) == 0);
  CHECK(TpTopology(1, "nvlink", gpu, p).algorithm(1e9) == TpTopology::Algorithm::kNone);
  CHECK_THROWS(TpTopology(2, "infiniband", gpu, p));

  // vLLM's custom all-reduce on a fully NVLinked group: its own floor, direct reads.
  AnalyticalParams v = p;
  v.allreduce_algorithm = AllReduceAlgorithm::kVllmCustom;
  v.custom_allreduce_floor_ns = 9000;
  const TpTopology c4(4, "nvlink", gpu, v);
  const double kib = 1024;
  // p = 4, 256 KiB < 512 KiB: one stage, 3 peers' buffers read.
  CHECK(c4.all_reduce_ns(256 * kib) == Approx(9000 + 3 * 256 * kib / 150));
  CHECK(c4.algorithm(256 * kib) == TpTopology::Algorithm::kCustomOneStage);
  // p = 4, 1 MiB: two stages (reduce-scatter + all-gather).
  CHECK(c4.all_reduce_ns(1024 * kib) == Approx(9000 + 2 * 3.0 / 4 * 1024 * kib / 150));
  CHECK(c4.algorithm(1024 * kib) == TpTopology::Algorithm::kCustomTwoStage);
  // p = 8, 256 KiB is already two-stage; 128 KiB one-stage.
  const TpTopology c8(8, "nvlink", gpu, v);
  CHECK(c8.all_reduce_ns(256 * kib) == Approx(9000 + 2 * 7.0 / 8 * 256 * kib / 150));
  CHECK(c8.all_reduce_ns(128 * kib) == Approx(9000 + 7 * 128 * kib / 150));
  // Above the custom size limit (8 MiB) NCCL again; and never without NVLink everywhere.
  CHECK(c8.all_reduce_ns(16 * 1024 * kib) == Approx(nv.all_reduce_ns(16 * 1024 * kib)));
  CHECK(TpTopology(4, "pairwise_nvlink", gpu, v).all_reduce_ns(kib) ==
        Approx(pair4.all_reduce_ns(kib)));
  // It is what an engine profile selects, with the kernel's floor; a misspelt algorithm, or the
  // custom kernel without its floor, is an input error.
  AnalyticalParams parsed;
  parsed.apply_analytical(ConfigNode::parse(
      "collectives: {algorithm: vllm_custom, custom_max_bytes: 4096, custom_floor_ns: 9200, "
      "floor_ns: 123}",
      "t"));
  CHECK(parsed.allreduce_algorithm == AllReduceAlgorithm::kVllmCustom);
  CHECK(parsed.custom_allreduce_max_bytes == 4096);
  CHECK(parsed.custom_allreduce_floor_ns == 9200);
  CHECK(parsed.collective_floor_ns == 123);
  CHECK_THROWS_AS(parsed.apply_analytical(ConfigNode::parse("collectives: {algorithm: tree}", "t")),
                  InputError);
  CHECK_THROWS_WITH(
      parsed.apply_analytical(ConfigNode::parse("collectives: {algorithm: vllm_custom}", "t")),
      Catch::Contains("custom_floor_ns"));
}

TEST_CASE(
    "on a multicast NVSwitch NCCL runs NVLS above two GPUs: two steps, (p+1)/p bytes per link",
    "[costmodels][analytical]") {
  GpuSpec gpu = testing::a100_like();  // NVLink 300 GB/s one way
  gpu.nvswitch_multicast = true;
  AnalyticalParams p;
  p.nvlink_efficiency = 0.5;  // 150 bytes/ns
  p.hop_latency_ns = 1000;
  p.collective_floor_ns = 30000;
  // p = 8: ring 30000 + 14000 + 1.75 S/150, NVLS 30000 + 2000 + 1.125 S/150: NVLS from any size
  // (fewer steps and fewer bytes).
  const TpTopology t8(8, "nvlink", gpu, p);
  CHECK(t8.has_nvls());
  CHECK(t8.algorithm(2048) == TpTopology::Algorithm::kNvls);
  CHECK(t8.all_reduce_ns(64e6) == Approx(30000 + 2000 + 9.0 / 8 * 64e6 / 150));
  // Two GPUs never (NCCL turns NVLS off at p ≤ 2), nor pairs or PCIe.
  CHECK_FALSE(TpTopology(2, "nvlink", gpu, p).has_nvls());
  CHECK_FALSE(TpTopology(4, "pcie", gpu, p).has_nvls());
  CHECK(TpTopology(2, "nvlink", gpu, p).all_reduce_ns(1e6) == Approx(30000 + 2 * 1000 + 1e6 / 150));
  // With one floor and one step latency NVLS is never slower from p = 3 on: 2 ≤ 2(p−1) steps and
  // (p+1)/p ≤ 2(p−1)/p bytes per link (equal bytes at p = 3, where only the steps differ).
  const TpTopology t3(3, "nvlink", gpu, p);
  CHECK(t3.all_reduce_ns(3e6) == Approx(30000 + 2000 + 4.0 / 3 * 3e6 / 150));
  for (int n = 3; n <= 8; ++n) {
    for (const double bytes : {2048.0, 1e6, 64e6}) {
      CHECK(TpTopology(n, "nvlink", gpu, p).algorithm(bytes) == TpTopology::Algorithm::kNvls);
    }
  }
}

TEST_CASE("efficiencies and achieved fractions above 1 or at 0 are input errors",
          "[costmodels][analytical][bad-input]") {
  // Each would otherwise price work faster than the datasheet peak (or divide by zero).
  for (const std::string yaml :
       {"gemm: {efficiency: 1.8}", "gemm: {clock_fraction: 0}", "memory: {eta_max: 3.5}",
        "attention: {decode_bw_fraction: 5}", "attention: {prefill_efficiency: 35}",
        "light: {rmsnorm: {bw_fraction: 7}}", "collectives: {nvlink_efficiency: 1.5}",
        "collectives: {pcie_efficiency: 0}"}) {
    INFO(yaml);
    AnalyticalParams p;
    CHECK_THROWS_WITH(
        p.apply_analytical(ConfigNode::parse(yaml, "hw.yaml")),
        Catch::StartsWith("hw.yaml:1:") && Catch::Contains("expected a number in (0, 1]"));
  }
  AnalyticalParams ok;
  ok.apply_analytical(
      ConfigNode::parse("gemm: {efficiency: 1}\nmemory: {eta_max: 0.9}", "hw.yaml"));
  CHECK(ok.gemm_efficiency == 1);
  CHECK(ok.eta_max == 0.9);
}

TEST_CASE(
    "every analytical term can be switched off and the full model is slower than the "
    "bare roofline",
    "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const ReplicaSpec r = testing::replica_of(gpu, model, 2);
  AnalyticalCostModel::Options bare;
  bare.terms = AnalyticalTerms::all_off();
  bare.table_max_tokens = 64;
  AnalyticalCostModel::Options full;
  full.table_max_tokens = 64;
  const AnalyticalCostModel off(bare), on(full);
  BatchShape b;
  b.prefills.push_back({512, 100});
  b.decode_contexts = {300, 400};
  const StepCost c_off = off.step(b, r);
  const StepCost c_on = on.step(b, r);
  CHECK(c_off[CostComponent::kHost] == 0);
  CHECK(c_off[CostComponent::kCollective] == 0);
  CHECK(c_on[CostComponent::kCollective] > 0);
  CHECK(c_on.total_ns > c_off.total_ns);
  // Beyond the table the model computes directly and agrees with its own pricer.
  BatchShape big;
  big.prefills.push_back({5000, 0});
  const StepCost c_big = on.step(big, r);
  const LayerPricer pr = on.pricer(r);
  CHECK(c_big[CostComponent::kGemm] == Approx(32 * pr.layer_ns(5000, false).gemm));
}

TEST_CASE("a step's launch follows the CUDA-graph mode and the largest capture size",
          "[costmodels][analytical][graphs]") {
  ReplicaSpec r = testing::replica_of(testing::a100_like(), testing::llama2_7b_like());
  // Decode-only (vLLM V0): graphs for decode steps of any size, never with a prefill.
  CHECK(r.step_launch(false, 1) == StepLaunch::kFullGraph);
  CHECK(r.step_launch(false, 4096) == StepLaunch::kFullGraph);
  CHECK(r.step_launch(true, 17) == StepLaunch::kEager);
  // vLLM V1: piecewise graphs for steps with prefill, eager above the largest capture size.
  r.cuda_graph_mode = CudaGraphMode::kPiecewise;
  r.cuda_graph_max_tokens = 256;
  CHECK(r.step_launch(false, 256) == StepLaunch::kFullGraph);
  CHECK(r.step_launch(false, 257) == StepLaunch::kEager);
  CHECK(r.step_launch(true, 256) == StepLaunch::kPiecewiseGraph);
  CHECK(r.step_launch(true, 257) == StepLaunch::kEager);
  r.cuda_graphs = false;  // enforce_eager
  CHECK(r.step_launch(false, 1) == StepLaunch::kEager);
  CHECK(r.step_launch(true, 16) == StepLaunch::kEager);
  CHECK(cuda_graph_mode_named("piecewise") == CudaGraphMode::kPiecewise);
  CHECK(cuda_graph_mode_named("decode_only") == CudaGraphMode::kDecodeOnly);
  CHECK_FALSE(cuda_graph_mode_named("full"));
}

TEST_CASE("CUDA graphs price decode-only steps in both modes and mixed steps only when piecewise",
          "[costmodels][analytical][graphs]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  ReplicaSpec v0 = testing::replica_of(gpu, model);
  ReplicaSpec v1 = v0;
  v1.cuda_graph_mode = CudaGraphMode::kPiecewise;
  v1.cuda_graph_max_tokens = 256;
  ReplicaSpec eager = v0;
  eager.cuda_graphs = false;
  AnalyticalCostModel::Options o;
  o.table_max_tokens = 1024;
  const AnalyticalCostModel cm(o);
  const LayerPricer pr = cm.pricer(v1);
  BatchShape mixed;  // 10 prefill tokens of a cached prompt + 40 decodes
  mixed.prefills.push_back({10, 500});
  mixed.decode_contexts.assign(40, 600);
  const StepCost a = cm.step(mixed, v0);  // V0: eager
  const StepCost b = cm.step(mixed, v1);  // V1: piecewise graph
  CHECK(a.total_ns == cm.step(mixed, eager).total_ns);
  CHECK(b.total_ns < a.total_ns);
  // Everything but attention is priced as in a graph; attention keeps its eager launch floors.
  CHECK(b[CostComponent::kHost] == Approx(pr.host_ns(41, true)));
  CHECK(a[CostComponent::kHost] == Approx(pr.host_ns(41, false)));
  CHECK(b[CostComponent::kGemm] == Approx(32 * pr.layer_ns(50, true).gemm));
  CHECK(b[CostComponent::kLight] == Approx(32 * pr.layer_ns(50, true).light));
  CHECK(b[CostComponent::kAttention] == Approx(a[CostComponent::kAttention]));
  // Decode-only steps are full graphs in both modes, cheaper than eager; past the capture size
  // V1 runs eager.
  BatchShape decode;
  decode.decode_contexts.assign(64, 600);
  CHECK(cm.step(decode, v1).total_ns == cm.step(decode, v0).total_ns);
  CHECK(cm.step(decode, v0).total_ns < cm.step(decode, eager).total_ns);
  BatchShape big = mixed;
  big.prefills[0].tokens = 400;  // 440 tokens > 256
  CHECK(cm.step(big, v1).total_ns == cm.step(big, eager).total_ns);
}

TEST_CASE("tile-dependent occupancy gives large tiles one CTA per SM and small tiles several",
          "[costmodels][analytical]") {
  AnalyticalParams p;
  p.ctas_per_sm = 4;
  p.accumulator_budget = 32768;
  CHECK(ctas_per_sm_for(256, 128, p) == 1);
  CHECK(ctas_per_sm_for(128, 128, p) == 2);
  CHECK(ctas_per_sm_for(128, 64, p) == 4);
  CHECK(ctas_per_sm_for(64, 64, p) == 4);  // capped by ctas_per_sm
  p.accumulator_budget = 0;
  CHECK(ctas_per_sm_for(256, 128, p) == 4);  // no budget: every tile at ctas_per_sm
}

TEST_CASE("a partial last round of co-resident CTAs costs what its busiest SM can do",
          "[costmodels][analytical]") {
  AnalyticalParams p;
  p.lone_cta_utilization = 0.8;
  // One CTA per SM: plain waves, time in full-SM CTA runs = ceil(work / SMs).
  GridRounds r = grid_rounds(250, 100, 1, p);
  CHECK(r.waves == 3);
  CHECK(r.sm_units == 3);
  // Two per SM: 250 CTAs = one full round (200, cost 2) + 50 lone CTAs at 0.8 of the SM.
  r = grid_rounds(250, 100, 2, p);
  CHECK(r.waves == 2);
  CHECK(r.sm_units == Approx(2 + 1 / 0.8));
  // 150 CTAs on 100 SMs with room for 2: the busiest SMs hold 2, a full-round cost.
  r = grid_rounds(150, 100, 2, p);
  CHECK(r.waves == 1);
  CHECK(r.sm_units == 2);
  // Four per SM, 3 on the busiest SM: utilization interpolates 0.8 → 1 (0.9333 at k = 3).
  r = grid_rounds(300, 100, 4, p);
  CHECK(r.sm_units == Approx(3 / (0.8 + 0.2 * 2.0 / 3.0)));
  // Utilization 0 keeps the old rule: a partial round costs a full one.
  p.lone_cta_utilization = 0;
  CHECK(grid_rounds(50, 100, 2, p).sm_units == 2);
}

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

TEST_CASE("a hardware file must give every analytical constant: no built-in default stands in",
          "[costmodels][analytical]") {
  const std::string complete = testing::test_constants().dump();
  auto gpu_with = [](const std::string& constants) {
    GpuSpec g = testing::a100_like();
    g.file = ConfigNode::parse(constants, "gpu.yaml");
    return g;
  };
  CHECK_NOTHROW(AnalyticalParams::for_gpu(gpu_with(complete)));
  // Dropping any one constant (or a whole section) names what is missing.
  for (const char* key :
       {"wave_ns", "eta_max", "decode_bw_fraction", "hop_latency_ns", "graph_launch_scale",
        "row_ctas_per_sm", "l2_resident_fraction", "l2_speedup", "graph_floor_ns"}) {
    INFO(key);
    ConfigNode n = ConfigNode::parse(complete, "gpu.yaml");
    YAML::Node root = YAML::Clone(n.yaml());
    bool removed = false;
    for (auto sec : {"gemm", "memory", "attention", "light", "collectives"}) {
      if (root["analytical"][sec][key]) removed = root["analytical"][sec].remove(key);
    }
    if (root["host"][key]) removed = root["host"].remove(key);
    REQUIRE(removed);
    YAML::Emitter out;
    out << root;
    CHECK_THROWS_WITH(AnalyticalParams::for_gpu(gpu_with(out.c_str())), Catch::Contains(key));
  }
  CHECK_THROWS_WITH(AnalyticalParams::for_gpu(gpu_with("name: x")), Catch::Contains("analytical"));
  // L2 is not slower than DRAM, and holds at most all of L2.
  for (const auto& [key, value, expected] :
       {std::tuple{"l2_speedup", "0.5", "expected a speedup of at least 1"},
        std::tuple{"l2_resident_fraction", "1.5", "l2_resident_fraction"}}) {
    INFO(key);
    ConfigNode n = ConfigNode::parse(complete, "gpu.yaml");
    YAML::Node root = YAML::Clone(n.yaml());
    root["analytical"]["light"][key] = value;
    YAML::Emitter out;
    out << root;
    CHECK_THROWS_WITH(AnalyticalParams::for_gpu(gpu_with(out.c_str())),
                      Catch::Contains(expected) && Catch::Contains("gpu.yaml"));
  }
  GpuSpec bare = testing::a100_like();
  bare.file = ConfigNode();
  CHECK_THROWS_AS(AnalyticalParams::for_gpu(bare), InputError);
}

TEST_CASE("a pipeline-parallel step is one batch's pass through every stage plus the hand-offs",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const AnalyticalCostModel cm{AnalyticalCostModel::Options{}};
  BatchShape b;
  b.prefills.push_back({1000, 0});
  b.decode_contexts.assign(16, 500);
  ReplicaSpec one = testing::replica_of(gpu, model, 1);
  one.topology = "nvlink";
  ReplicaSpec four = one;
  four.pp = 4;
  const StepCost c1 = cm.step(b, one);
  const StepCost c4 = cm.step(b, four);
  // Same layers, same kernels: only the three stage-to-stage hand-offs of 1016 tokens' hidden
  // states and residual are added, each one copy over one direction of NVLink as the KV link
  // model prices it (at tp 1 nothing to all-gather).
  const double bytes = 2 * 1016.0 * model.hidden_size * 2;
  const ClusterSpec copy;
  const double hop =
      bytes / (gpu.nvlink_gb_per_s / 2 * copy.nvlink_efficiency) + copy.nvlink_latency_us * 1e3;
  CHECK(c4[CostComponent::kGemm] == Approx(c1[CostComponent::kGemm]));
  CHECK(c4[CostComponent::kAttention] == Approx(c1[CostComponent::kAttention]));
  CHECK(c4[CostComponent::kCollective] - c1[CostComponent::kCollective] == Approx(3 * hop));
  // Over PCIe the hand-offs are slower.
  ReplicaSpec pcie = four;
  pcie.topology = "pcie";
  CHECK(cm.step(b, pcie).total_ns > c4.total_ns);

  // The slowest stage spaces the steps in flight: at pp 3 vLLM splits 32 layers 11 / 11 / 10;
  // the first adds the embedding, the last the final norm, LM head and sampler, the first two
  // their boundary's send. One stage prices nothing.
  CHECK(c1.stage_ns == 0);
  const LayerPricer pr = cm.pricer(one);
  const double tokens = 1016;
  const double per_layer = (c1[CostComponent::kGemm] + c1[CostComponent::kLight] +
                            c1[CostComponent::kCollective] + c1[CostComponent::kAttention]) /
                           model.num_layers;
  const double norm = pr.final_norm_ns(tokens, false);
  const double edges = pr.edge_tokens_ns(tokens, false);
  const double head = c1[CostComponent::kEmbedding] - edges;
  for (const char* topology : {"nvlink", "pairwise_nvlink"}) {
    ReplicaSpec three = one;
    three.pp = 3;
    three.topology = topology;
    const LayerPricer pr3 = cm.pricer(three);
    const double first = 11 * per_layer + edges - norm + pr3.stage_boundary_ns(tokens, 0);
    const double middle = 11 * per_layer + pr3.stage_boundary_ns(tokens, 1);
    const double last = 10 * per_layer + norm + head;
    CHECK(cm.step(b, three).stage_ns == Approx(std::max({first, middle, last})));
  }
  // Pairwise NVLink at tp 1: GPUs 0–1 share a bridge, 1–2 talk over PCIe, so the middle stage's
  // send is the slow one.
  ReplicaSpec pair3 = one;
  pair3.pp = 3;
  pair3.topology = "pairwise_nvlink";
  const LayerPricer pp3 = cm.pricer(pair3);
  CHECK(pp3.stage_boundary_ns(tokens, 1) > 2 * pp3.stage_boundary_ns(tokens, 0));
}

TEST_CASE("a stage boundary sends a 1/tp slice per rank, over the NICs between nodes",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const AnalyticalCostModel cm{AnalyticalCostModel::Options{}};
  ReplicaSpec r = testing::replica_of(gpu, model, 8);
  r.pp = 2;
  r.topology = "nvlink";
  const double tokens = 4096;
  const double bytes = 2 * tokens * model.hidden_size * 2;  // hidden states + residual, bf16
  // Two 8-GPU nodes (the default): each rank sends its eighth through its own NIC, at line rate
  // after the NIC latency, then stage 1 all-gathers the eighths over NVLink.
  const LayerPricer two_nodes = cm.pricer(r);
  const double nic = bytes / 8 / r.cluster.nic_gb_per_s + r.cluster.nic_latency_us * 1e3;
  const TpTopology group(8, "nvlink", gpu, two_nodes.params());
  CHECK(two_nodes.stage_boundary_ns(tokens, 0) == Approx(nic + group.all_gather_ns(bytes)));
  // The ring all-gather: 7 steps, each GPU receiving 7/8 of the whole.
  CHECK(group.all_gather_ns(bytes) ==
        Approx(two_nodes.params().collective_floor_ns + 7 * two_nodes.params().hop_latency_ns +
               7.0 / 8 * bytes / group.ring_bottleneck_bytes_per_ns()));
  // One 16-GPU node: the slices go over NVLink instead.
  r.cluster.gpus_per_node = 16;
  const LayerPricer one_node = cm.pricer(r);
  const double nvlink =
      bytes / 8 / r.cluster.copy_bytes_per_ns(gpu, true) + r.cluster.nvlink_latency_us * 1e3;
  CHECK(one_node.stage_boundary_ns(tokens, 0) == Approx(nvlink + group.all_gather_ns(bytes)));
  // A whole step differs by that alone (the cost model's tables are keyed by the cluster too).
  BatchShape b;
  b.prefills.push_back({4096, 0});
  const double in_node = cm.step(b, r)[CostComponent::kCollective];
  r.cluster.gpus_per_node = 8;
  CHECK(cm.step(b, r)[CostComponent::kCollective] - in_node == Approx(nic - nvlink));
}

TEST_CASE("FP8 weights speed up the projection GEMMs but not attention or the LM head",
          "[costmodels][analytical]") {
  GpuSpec gpu = testing::h100_like();
  gpu.fp8_tflops = 2 * gpu.bf16_tflops;
  const ModelSpec model = testing::llama2_7b_like();
  const AnalyticalCostModel cm{AnalyticalCostModel::Options{}};
  BatchShape b;
  b.prefills.push_back({4096, 16384});  // long context: attention is compute-bound
  ReplicaSpec bf16 = testing::replica_of(gpu, model, 1);
  ReplicaSpec fp8 = bf16;
  fp8.weights = Precision::kFp8;
  const StepCost a = cm.step(b, bf16);
  const StepCost f = cm.step(b, fp8);
  CHECK(f[CostComponent::kGemm] < 0.75 * a[CostComponent::kGemm]);
  CHECK(f[CostComponent::kAttention] == Approx(a[CostComponent::kAttention]));
  // FP8 checkpoints keep the LM head in bf16 (quantization recipes skip it).
  BatchShape d;
  d.decode_contexts.assign(64, 1000);
  CHECK(cm.step(d, fp8)[CostComponent::kEmbedding] ==
        Approx(cm.step(d, bf16)[CostComponent::kEmbedding]));
}

TEST_CASE("a checkpoint that keeps attention in bf16 prices only its MLP as FP8",
          "[costmodels][analytical]") {
  GpuSpec gpu = testing::h100_like();
  gpu.fp8_tflops = 2 * gpu.bf16_tflops;
  ModelSpec model = testing::llama2_7b_like();
  ModelSpec skips = model;
  skips.fp8_skips_attention = true;  // e.g. Llama-4-Scout FP8-dynamic
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  ReplicaSpec bf16 = testing::replica_of(gpu, model, 1);
  ReplicaSpec fp8 = bf16;
  fp8.weights = Precision::kFp8;
  ReplicaSpec fp8_skips = fp8;
  fp8_skips.model = &skips;
  const LayerPricer a(bf16, p, AnalyticalTerms{});
  const LayerPricer f(fp8, p, AnalyticalTerms{});
  const LayerPricer k(fp8_skips, p, AnalyticalTerms{});
  for (double tokens : {16.0, 4096.0}) {
    INFO(tokens);
    for (ProjOp op : {ProjOp::kQkv, ProjOp::kO}) {
      CHECK(k.proj_ns(op, tokens, false) == Approx(a.proj_ns(op, tokens, false)));
      CHECK(f.proj_ns(op, tokens, false) < a.proj_ns(op, tokens, false));
    }
    CHECK(k.proj_ns(ProjOp::kGateUp, tokens, false) ==
          Approx(f.proj_ns(ProjOp::kGateUp, tokens, false)));
  }
  // The memory planner counts those weights at 2 bytes.
  CHECK(skips.unquantized_params() ==
        Approx(model.unquantized_params() + 32 * model.attention_params_per_layer()));
  CHECK(model.attention_params_per_layer() == Approx(4.0 * 4096 * 4096));
}

TEST_CASE("an MLA model caches and reads one latent per token, not K and V of every head",
          "[costmodels][analytical]") {
  ModelSpec mla = testing::llama2_7b_like();
  mla.kv_lora_rank = 512;
  mla.qk_rope_head_dim = 64;
  BatchShape b;
  b.decode_contexts = {999, 1999};  // 1000 + 2000 context tokens including the new one
  for (int tp : {1, 4}) {
    INFO("tp " << tp);
    const LayerShapes s = LayerShapes::make(mla, tp);
    CHECK(s.kv_width == 576);  // the latent is replicated on every TP rank
    const AttentionWork w = AttentionWork::of(b, s, 2);
    CHECK(w.decode_bytes == Approx(3000.0 * 576 * 2 + 2 * 2 * s.q_heads * s.head_dim * 2));
    CHECK(w.decode_flops == Approx(2 * 3000.0 * s.q_heads * (2 * 512 + 64)));
  }
  const LayerShapes dense = LayerShapes::make(testing::llama2_7b_like(), 1);
  CHECK(dense.kv_width == 2 * 32 * 128);
}

TEST_CASE("an interleaved MoE model prices the mean of its expert and dense layers",
          "[costmodels][analytical]") {
  const GpuSpec gpu = testing::a100_like();
  ModelSpec moe = testing::llama2_7b_like();
  moe.num_experts = 16;
  moe.experts_per_token = 2;
  moe.intermediate_size = 2048;
  moe.shared_expert_intermediate = 2048;
  ModelSpec all_moe = moe;  // every layer routed
  ModelSpec dense = moe;    // every layer dense, 8192 wide
  dense.num_experts = 0;
  dense.experts_per_token = 0;
  dense.shared_expert_intermediate = 0;
  dense.intermediate_size = 8192;
  moe.moe_layer_interval = 2;  // Llama-4 Maverick style: every second layer MoE
  moe.dense_intermediate_size = 8192;
  AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  p.light[static_cast<std::size_t>(LightKernel::kSiluMul)].row_elem_ns = 0.5;
  const LayerPricer mixed(testing::replica_of(gpu, moe, 1), p, AnalyticalTerms{});
  const LayerPricer routed(testing::replica_of(gpu, all_moe, 1), p, AnalyticalTerms{});
  const LayerPricer plain(testing::replica_of(gpu, dense, 1), p, AnalyticalTerms{});
  for (double tokens : {1.0, 64.0, 2048.0}) {
    INFO(tokens);
    for (ProjOp op : {ProjOp::kGateUp, ProjOp::kDown}) {
      CHECK(mixed.proj_ns(op, tokens, false) == Approx(0.5 * routed.proj_ns(op, tokens, false) +
                                                       0.5 * plain.proj_ns(op, tokens, false)));
    }
    CHECK(mixed.proj_ns(ProjOp::kQkv, tokens, false) ==
          routed.proj_ns(ProjOp::kQkv, tokens, false));
    CHECK(mixed.act_ns(tokens, false) ==
          Approx(0.5 * routed.act_ns(tokens, false) + 0.5 * plain.act_ns(tokens, false)));
    // Fused MoE activates one row per (token, routed expert), each one expert wide.
    const auto act = routed.vidur_light_uses(tokens)[static_cast<std::size_t>(VidurOp::kMlpAct)];
    CHECK(act.work.rows == 2 * tokens);
    CHECK(act.work.row_elems == 2048);
  }
  // The roofline model mixes the same way.
  const RooflineCostModel roof(RooflineCostModel::parse(ConfigNode::parse("kind: roofline", "r")));
  BatchShape b;
  b.prefills.push_back({2048, 0});
  auto gemm = [&](const ModelSpec& m) {
    return roof.step(b, testing::replica_of(gpu, m, 1))[CostComponent::kGemm];
  };
  CHECK(gemm(moe) == Approx(0.5 * gemm(all_moe) + 0.5 * gemm(dense)).epsilon(1e-9));
  CHECK(gemm(moe) != Approx(gemm(all_moe)));
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
