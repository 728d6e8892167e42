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
