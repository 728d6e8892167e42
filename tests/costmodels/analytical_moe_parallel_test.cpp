// Expert parallelism and attention data parallelism of an MoE replica: the per-GPU shapes, the
// experts each rank computes, the dispatch and combine, how a step's requests fall on the
// attention groups, and the KV cache the groups hold.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/analytical/collective_model.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/attention_work.hpp"
#include "sim/hardware/memory_planner.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

namespace {

// Qwen3-235B-A22B's shape (configs/models/Qwen/Qwen3-235B-A22B.yaml).
ModelSpec qwen3_moe() {
  ModelSpec m;
  m.name = "test/qwen3-235b-a22b";
  m.num_layers = 94;
  m.hidden_size = 4096;
  m.num_heads = 64;
  m.num_kv_heads = 4;
  m.head_dim = 128;
  m.intermediate_size = 1536;
  m.vocab_size = 151936;
  m.max_position_embeddings = 40960;
  m.num_experts = 128;
  m.experts_per_token = 8;
  return m;
}

ReplicaSpec laid_out(const GpuSpec& g, const ModelSpec& m, int tp, int dp, int ep) {
  ReplicaSpec r = testing::replica_of(g, m, tp);
  r.attention_dp = dp;
  r.moe_ep = ep;
  return r;
}

}  // namespace

TEST_CASE("expert parallelism gives each rank its experts whole and its share of the tokens",
          "[costmodels][analytical][moe]") {
  const ModelSpec m = qwen3_moe();
  // TP 8 alone: every expert's 1536 columns over 8 GPUs, all 128 experts on each.
  const LayerShapes tp8 = LayerShapes::make(m, 8);
  CHECK(tp8.inter == 192);
  CHECK(tp8.q_heads == 8);
  // EP 8 with TP attention: 16 whole experts per rank; attention still over 8 GPUs.
  const LayerShapes ep8 = LayerShapes::make(m, 8, 1, 8);
  CHECK(ep8.inter == 1536);
  CHECK(ep8.q_heads == 8);
  // DEP 8: one GPU per attention group (all 64 heads, all 4 KV heads), 16 experts per GPU.
  const LayerShapes dep8 = LayerShapes::make(m, 8, 8, 8);
  CHECK(dep8.q_heads == 64);
  CHECK(dep8.kv_heads == 4);
  CHECK(dep8.inter == 1536);
  // 512 tokens routed top-8 over 8 ranks: 512 rows per rank over its 16 experts, 32 each.
  const GemmShape up = ep8.expert_gemm(ProjOp::kGateUp, 512);
  CHECK(up.count == 16);
  CHECK(up.m == 32);
  CHECK(up.k == 4096);
  CHECK(up.n == 2 * 1536);
  // Tokens dispatched are tokens combined: the ranks' rows sum to every (token, expert) pair.
  for (int ep : {1, 2, 4, 8}) {
    const LayerShapes s = LayerShapes::make(m, 8, 1, ep);
    CHECK(s.expert_rows(1000) * ep == Approx(1000.0 * 8));
  }
  // Two tokens activate at most 16 experts, spread over the ranks.
  const GemmShape few = ep8.expert_gemm(ProjOp::kDown, 2);
  CHECK(few.count == 2);
  CHECK(few.m == 1);
}

TEST_CASE("the routed experts' dispatch and combine cross every GPU of the stage",
          "[costmodels][analytical][moe]") {
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec m = qwen3_moe();
  const AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  const double tokens = 256;
  const double bytes = tokens * 4096 * 2;  // the tokens' bf16 hidden states
  const TpTopology eight(8, "nvlink", gpu, p);
  // With attention groups: an all-gather of the groups' tokens before the experts and a
  // reduce-scatter after, each a ring over the 8 GPUs.
  const LayerPricer dep(laid_out(gpu, m, 8, 8, 8), p, AnalyticalTerms{});
  CHECK(dep.expert_side_ns(tokens, false).comm == Approx(2 * eight.all_gather_ns(bytes)));
  // One GPU per group: no all-reduce inside a group.
  CHECK(dep.group_side_ns(tokens, false).comm == 0);
  // TP attention with EP: the experts' partial sums all-reduced, and the attention output's.
  const LayerPricer tep(laid_out(gpu, m, 8, 1, 8), p, AnalyticalTerms{});
  CHECK(tep.expert_side_ns(tokens, false).comm == Approx(eight.all_reduce_ns(bytes)));
  CHECK(tep.group_side_ns(tokens, false).comm == Approx(eight.all_reduce_ns(bytes)));
  // Attention groups of 2 GPUs each reduce their attention output among themselves.
  const LayerPricer dep4(laid_out(gpu, m, 8, 4, 8), p, AnalyticalTerms{});
  const TpTopology two(2, "nvlink", gpu, p);
  CHECK(dep4.group_side_ns(tokens, false).comm == Approx(2 * two.all_reduce_ns(bytes)));
  // An EP layer is its two parts.
  const LayerPricer::LayerCost whole = tep.layer_ns(tokens, false);
  CHECK(whole.total() == Approx(tep.group_side_ns(tokens, false).total() +
                                tep.expert_side_ns(tokens, false).total()));
}

TEST_CASE("an MoE layer pays for its routing kernels, quantizing only what its format quantizes",
          "[costmodels][analytical][moe]") {
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec m = qwen3_moe();
  const AnalyticalParams p = AnalyticalParams::for_gpu(gpu);
  const double tokens = 512;
  ReplicaSpec bf16 = laid_out(gpu, m, 8, 1, 8);
  ReplicaSpec fp8 = bf16;
  fp8.weights = Precision::kFp8;
  const LayerPricer pb(bf16, p, AnalyticalTerms{});
  const LayerPricer pf(fp8, p, AnalyticalTerms{});
  // Top-k reads each token's 128 fp32 logits and writes its 8 (id, weight) pairs; one CTA per
  // token over its row, as the norm kernel runs.
  const double logits = tokens * 128 * 4;
  CHECK(pb.route_select_ns(tokens, false) ==
        Approx(pb.light_ns(LightKernel::kRmsNorm, {logits + tokens * 8 * 8, tokens, 128, logits},
                           false)));
  // bf16 experts: the sort of the 4096 (token, expert) pairs and the weighted sum of each
  // token's outputs (this rank's 512 rows of 4096 values into 512 tokens), both elementwise.
  const double pairs = tokens * 8;
  const double rows = tokens * 8 / 8;
  const double sort = pb.light_ns(LightKernel::kAdd, {3 * pairs * 4, pairs, 0, pairs * 4}, false);
  const double sum = pb.light_ns(
      LightKernel::kAdd, {2 * rows * 4096 + 2 * tokens * 4096, tokens, 0, 2 * rows * 4096}, false);
  CHECK(pb.route_dispatch_ns(tokens, false) == Approx(sort + sum));
  // fp8 experts quantize the gathered tokens before the up projection and the rank's rows
  // before the down projection, one CTA per row.
  const double quant =
      pf.light_ns(LightKernel::kRmsNorm, {3 * tokens * 4096, tokens, 4096, 2 * tokens * 4096},
                  false) +
      pf.light_ns(LightKernel::kRmsNorm, {3 * rows * 1536, rows, 1536, 2 * rows * 1536}, false);
  CHECK(pf.route_dispatch_ns(tokens, false) == Approx(sort + sum + quant));
  // The routing kernels sit in the layer: the group side runs the top-k, the experts the rest.
  CHECK(pb.expert_side_ns(tokens, false).light ==
        Approx(pb.light_ns(LightKernel::kSiluMul, {6 * rows * 1536, rows, 1536}, false) + sort +
               sum));
}

TEST_CASE("a step on attention groups lasts as long as its busiest group",
          "[costmodels][analytical][moe]") {
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec m = qwen3_moe();
  AnalyticalCostModel::Options o;
  o.terms.host = false;
  const AnalyticalCostModel cm(o);
  const ReplicaSpec dep = laid_out(gpu, m, 8, 4, 8);
  const LayerPricer pr = cm.pricer(dep);
  // Six decodes dealt in turn (2, 2, 1, 1), then the prefill to the first group with the fewest
  // tokens: group 2 holds 1 decode and 1000 prompt tokens and sets the step's attention.
  BatchShape b;
  b.decode_contexts = {100, 200, 300, 400, 500, 600};
  b.prefills.push_back({1000, 0});
  BatchShape busiest;
  busiest.decode_contexts = {300};
  busiest.prefills.push_back({1000, 0});
  const StepCost c = cm.step(b, dep);
  const AttentionWork w = AttentionWork::of(busiest, pr.shapes(), dep.kv_dtype_bytes);
  CHECK(c[CostComponent::kAttention] == Approx(94 * pr.attention_ns(w, false)));
  // Its layers: the busiest group's own work on 1001 tokens, the experts of all 1006.
  const double layer = pr.group_side_ns(1001, false).gemm + pr.expert_side_ns(1006, false).gemm;
  CHECK(c[CostComponent::kGemm] == Approx(94 * layer).epsilon(1e-9));
  // Balanced decodes: 8 on 4 groups cost what 2 do on one group, plus the experts of 8.
  BatchShape eight;
  eight.decode_contexts.assign(8, 512);
  BatchShape two;
  two.decode_contexts.assign(2, 512);
  const StepCost e = cm.step(eight, dep);
  CHECK(e[CostComponent::kAttention] ==
        Approx(94 * pr.attention_ns(AttentionWork::of(two, pr.shapes(), 2), true)));
}

TEST_CASE("one cost model prices TP, TEP and DEP replicas of one width apart",
          "[costmodels][analytical][moe]") {
  // Two pools of one width (a TEP 8 prefill server, a DEP 8 decode server) share a cost model:
  // each must get its own step tables, as a model that priced it alone gives.
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec m = qwen3_moe();
  AnalyticalCostModel::Options o;
  o.terms.host = false;
  BatchShape b;
  b.decode_contexts.assign(64, 1024);
  b.prefills.push_back({2048, 0});
  const AnalyticalCostModel shared(o);
  std::vector<double> alone;
  std::vector<double> after_others;
  const ReplicaSpec layouts[] = {laid_out(gpu, m, 8, 1, 1), laid_out(gpu, m, 8, 1, 8),
                                 laid_out(gpu, m, 8, 8, 8)};
  for (const ReplicaSpec& r : layouts) {
    after_others.push_back(static_cast<double>(shared.step(b, r).total_ns));
    const AnalyticalCostModel own(o);
    alone.push_back(static_cast<double>(own.step(b, r).total_ns));
  }
  CHECK(after_others == alone);
  // And the three layouts price differently: the tables were not one layout's.
  CHECK(alone[0] != alone[1]);
  CHECK(alone[1] != alone[2]);
}

TEST_CASE("attention groups each keep a KV cache for their own requests",
          "[costmodels][analytical][moe]") {
  GpuSpec gpu = testing::h100_like();
  const ModelSpec m = qwen3_moe();
  // DEP 8: each GPU holds all 4 KV heads of its own requests; TP 8 replicates the 4 heads to 8.
  const MemoryPlan dep = plan_kv_memory(laid_out(gpu, m, 8, 8, 8), 0.9, 16, 8192, 256);
  const MemoryPlan tp = plan_kv_memory(testing::replica_of(gpu, m, 8), 0.9, 16, 8192, 256);
  CHECK(dep.block_bytes == Approx(94.0 * 2 * 4 * 128 * 2 * 16));
  CHECK(tp.block_bytes == Approx(94.0 * 2 * 1 * 128 * 2 * 16));
  // Per GPU: its 1/8 of the routed experts and the router whole, but the attention, embedding
  // and LM head whole (one GPU per group).
  const double h = 4096;
  const double attention = 94 * m.attention_params_per_layer() * 2;
  const double experts = 94 * 128 * 3 * h * 1536 * 2 / 8 + 94 * h * 128 * 2;
  const double tables = 2 * 151936 * h * 2;
  CHECK(dep.weight_bytes == Approx(attention + experts + tables));
  // The replica's blocks are the 8 groups' together.
  const double free = 0.9 * gpu.device_memory_bytes() - dep.weight_bytes - dep.activation_bytes;
  CHECK(dep.num_blocks == 8 * static_cast<std::int64_t>(std::floor(free / dep.block_bytes)));
}

TEST_CASE("a model's first dense layers are priced as dense", "[costmodels][analytical][moe]") {
  ModelSpec m = qwen3_moe();
  m.first_dense_layers = 3;
  m.dense_intermediate_size = 12288;
  CHECK(m.moe_layers() == 91);
  CHECK_FALSE(m.is_moe_layer(2));
  CHECK(m.is_moe_layer(3));
  const double h = 4096;
  const double dense = m.attention_params_per_layer() + 3 * h * 12288;
  const double moe = m.attention_params_per_layer() + 128 * 3 * h * 1536 + h * 128;
  CHECK(m.num_params() == Approx(3 * dense + 91 * moe + 2 * 151936 * h));
  const LayerShapes s = LayerShapes::make(m, 8, 8, 8);
  CHECK(s.moe_fraction == Approx(91.0 / 94));
  CHECK(s.dense_inter == 12288);  // one GPU per attention group runs the dense MLP whole
}

TEST_CASE("an MoE layout that cannot be laid out is named", "[costmodels][moe]") {
  const ModelSpec m = qwen3_moe();
  CHECK(m.ep_problem(8, 8).empty());
  CHECK_THAT(m.ep_problem(3, 1), Catch::Contains("ep 3 does not divide the 128 experts"));
  CHECK_THAT(testing::llama2_7b_like().ep_problem(1, 2), Catch::Contains("is a dense model"));
}

TEST_CASE("DeepSeek-V3's MLA weights and GEMMs are its low-rank projections",
          "[costmodels][analytical][moe]") {
  ModelSpec m;
  m.name = "test/deepseek-v3";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.head_dim = 128;
  m.intermediate_size = 2048;
  m.vocab_size = 129280;
  m.num_experts = 256;
  m.experts_per_token = 8;
  m.shared_expert_intermediate = 2048;
  m.first_dense_layers = 3;
  m.dense_intermediate_size = 18432;
  m.kv_lora_rank = 512;
  m.qk_rope_head_dim = 64;
  m.q_lora_rank = 1536;
  // q: 7168·1536 + 1536·128·192; KV down: 7168·576; KV up: 512·128·256; o: 128·128·7168.
  const double attention =
      7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  CHECK(m.attention_params_per_layer() == Approx(attention));
  CHECK(attention == Approx(187.1e6).epsilon(1e-3));
  // 671 B parameters, its model card's figure (MTP module aside).
  CHECK(m.num_params() == Approx(671e9).epsilon(0.003));
  // One latent of 576 per token per layer: 70,272 bytes per token over 61 layers at fp16.
  CHECK(m.kv_bytes_per_token_per_layer(2) * 61 == 576 * 2 * 61);
  const LayerShapes s = LayerShapes::make(m, 8);
  const auto g = s.mla_qkv_gemms(10);
  CHECK(g[0].n == 1536 + 512 + 64);  // replicated down-projections
  CHECK(g[1].k == 1536);
  CHECK(g[1].n == 16 * 192);  // this GPU's 16 heads
  CHECK(g[2].k == 512);
  CHECK(g[2].n == 16 * 256);
}

TEST_CASE("sliding-window layers attend to and cache only the window",
          "[costmodels][analytical][moe]") {
  ModelSpec m = qwen3_moe();
  m.sliding_window = 128;
  m.sliding_window_pattern = 2;  // gpt-oss: layers 0, 2, 4, … slide
  CHECK(m.is_sliding_layer(0));
  CHECK_FALSE(m.is_sliding_layer(1));
  CHECK(m.sliding_layers() == 47);
  const LayerShapes s = LayerShapes::make(m, 1);
  CHECK(s.window_share == Approx(47.0 / 94));
  // A decode at 1000 tokens of context: full layers read 1001 tokens' K and V, windowed 128.
  BatchShape b;
  b.decode_contexts = {1000};
  const AttentionWork w = AttentionWork::of(b, s, 2);
  const double kv = 2 * 4 * 128 * 2;  // K and V of 4 heads, 2 bytes
  const double f = 47.0 / 94;
  CHECK(w.decode_bytes == Approx((1 - f) * 1001 * kv + f * 128 * kv + 2 * 64 * 128 * 2));
  // The cache counts the full-attention layers per block; each seat holds the window (and the
  // block being filled) of every sliding layer.
  GpuSpec gpu = testing::h100_like();
  gpu.memory_gb = 320;  // room for the whole model on one GPU
  const ReplicaSpec r = testing::replica_of(gpu, m, 1);
  const MemoryPlan p = plan_kv_memory(r, 0.9, 16, 8192, 64);
  CHECK(p.block_bytes == Approx(47.0 * kv * 16));
  const double free = 0.9 * gpu.device_memory_bytes() - p.weight_bytes - p.activation_bytes -
                      47.0 * kv * (128 + 16) * 64;
  CHECK(p.num_blocks == static_cast<std::int64_t>(std::floor(free / p.block_bytes)));
}

TEST_CASE("a hybrid model's linear-attention layers hold a state per request, not a KV cache",
          "[costmodels][analytical][moe]") {
  // Qwen3.5-397B-A17B (configs/models/Qwen/Qwen3.5-397B-A17B.yaml).
  ModelSpec m;
  m.name = "test/qwen3.5-397b-a17b";
  m.num_layers = 60;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 2;
  m.head_dim = 256;
  m.intermediate_size = 1024;
  m.vocab_size = 248320;
  m.num_experts = 512;
  m.experts_per_token = 10;
  m.shared_expert_intermediate = 1024;
  m.full_attention_interval = 4;
  m.attention_output_gate = true;
  m.linear_key_heads = 16;
  m.linear_value_heads = 64;
  m.linear_key_head_dim = 128;
  m.linear_value_head_dim = 128;
  m.linear_conv_kernel = 4;
  CHECK(m.linear_layers() == 45);
  CHECK_FALSE(m.is_linear_layer(3));
  // State: 64 value heads of 128 × 128, and the convolution's last 3 inputs of q, k and v.
  CHECK(m.linear_state_elems() == 64.0 * 128 * 128 + (2 * 16 * 128 + 64 * 128) * 3);
  // Gated full attention: q and gate 2 · 32 · 256, k and v 2 · 2 · 256, o 32 · 256.
  CHECK(m.attention_params_per_layer() == 4096.0 * (2 * 8192 + 1024) + 8192.0 * 4096);
  CHECK(m.linear_attention_params() ==
        4096.0 * (2 * 2048 + 2 * 8192 + 128) + (2 * 2048 + 8192) * 4 + 8192.0 * 4096);
  CHECK(m.num_params() == Approx(397e9).epsilon(0.005));
  // On TP 8: KV blocks count the 15 full layers (2 KV heads over 8 GPUs: one each); each seat
  // holds 45 layers' state, an eighth of each on every GPU, in the cache's bf16.
  GpuSpec gpu = testing::h100_like();
  gpu.memory_gb = 180;
  ReplicaSpec r = testing::replica_of(gpu, m, 8);
  r.weights = Precision::kFp8;
  const MemoryPlan p = plan_kv_memory(r, 0.9, 16, 8192, 32);
  CHECK(p.block_bytes == Approx(15.0 * 2 * 1 * 256 * 2 * 16));
  const double seat = 45 * m.linear_state_elems() / 8 * 2;
  const double free =
      0.9 * gpu.device_memory_bytes() - p.weight_bytes - p.activation_bytes - seat * 32;
  CHECK(p.num_blocks == static_cast<std::int64_t>(std::floor(free / p.block_bytes)));
  // A decode step reads and writes each request's state in the linear layers.
  const LayerShapes s = LayerShapes::make(m, 8);
  CHECK(s.linear_share == Approx(0.75));
  BatchShape b;
  b.decode_contexts = {4095};
  const AttentionWork w = AttentionWork::of(b, s, 2);
  const double full = 4096.0 * 2 * 1 * 256 * 2 + 2 * 4 * 256 * 2;
  const double linear = 2 * m.linear_state_elems() / 8 * 2 + (s.linear_in_width + 1024) * 2;
  CHECK(w.decode_bytes == Approx(0.25 * full + 0.75 * linear));
}
