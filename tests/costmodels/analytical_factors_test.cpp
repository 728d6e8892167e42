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
  // launch (the GPC cluster cap).
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
