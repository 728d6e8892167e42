#include "sim/hardware/memory_planner.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "sim/hardware/catalog.hpp"

using namespace servesim;

namespace {
// The shipped catalog, shared by the tests (the specs a ReplicaSpec points at live in it).
Catalog& catalog() {
  static Catalog cat(Catalog::default_dirs());
  return cat;
}

// A replica of a shipped model on a shipped GPU.
ReplicaSpec shipped(const std::string& gpu, const std::string& model, int tp = 1) {
  const ConfigNode here = ConfigNode::flag("test");
  ReplicaSpec r;
  r.gpu = &catalog().gpu(gpu, here);
  r.model = &catalog().model(model, here);
  r.tp = tp;
  return r;
}
}  // namespace

TEST_CASE("KV block bytes follow layers, KV heads, head size and TP", "[memory]") {
  ReplicaSpec r = shipped("h100-sxm", "meta-llama/Llama-2-7b-hf");
  // 32 layers × 2 (K,V) × 32 heads × 128 × 2 bytes × 16 tokens = 8 MiB per block.
  const MemoryPlan tp1 = plan_kv_memory(r, 0.9, 16, 2048, 128);
  CHECK(tp1.block_bytes == Approx(32.0 * 2 * 32 * 128 * 2 * 16));
  CHECK(tp1.weight_bytes == Approx(6.74e9 * 2).epsilon(0.01));
  r.tp = 2;
  const MemoryPlan tp2 = plan_kv_memory(r, 0.9, 16, 2048, 128);
  CHECK(tp2.block_bytes == Approx(tp1.block_bytes / 2));
  CHECK(tp2.num_blocks > 2 * tp1.num_blocks);  // half the weights per GPU too
}

TEST_CASE("The planner matches vLLM's measured KV capacity on H100 within 3%", "[memory]") {
  // kv_blocks_total_gpu reported by vLLM V1 (gpu_memory_utilization 0.9, max_num_batched_tokens
  // 2048, max_num_seqs 128) in data/sim2real/experiments.csv. Nothing was fitted to them.
  struct Case {
    const char* model;
    int tp;
    double measured;
  };
  const Case cases[] = {{"meta-llama/Llama-2-7b-hf", 1, 7462},
                        {"codellama/CodeLlama-34b-Instruct-hf", 2, 26602},
                        {"meta-llama/Llama-2-70b-hf", 4, 31356},
                        {"mistralai/Mixtral-8x7B-v0.1", 2, 27510}};
  for (const auto& c : cases) {
    const ReplicaSpec r = shipped("h100-sxm", c.model, c.tp);
    INFO(c.model << " tp" << c.tp);
    CHECK(static_cast<double>(plan_kv_memory(r, 0.9, 16, 2048, 128).num_blocks) ==
          Approx(c.measured).epsilon(0.03));
  }
}

TEST_CASE("A model that does not fit yields no blocks", "[memory]") {
  const ReplicaSpec r = shipped("rtx-4090", "meta-llama/Llama-2-70b-hf");
  CHECK(plan_kv_memory(r, 0.9, 16, 2048, 128).num_blocks <= 0);
}

TEST_CASE("FP8 weights halve the blocks' linear layers but not embeddings, LM head or routers",
          "[memory]") {
  ReplicaSpec r = shipped("h100-sxm", "meta-llama/Llama-4-Scout-17B-16E-Instruct", 2);
  const double bf16 = plan_kv_memory(r, 0.9, 16, 2048, 128).weight_bytes;
  r.weights = Precision::kFp8;
  const double fp8 = plan_kv_memory(r, 0.9, 16, 2048, 128).weight_bytes;
  // 202048 × 5120 embedding + the same LM head, 48 routers of 5120 × 16, at 2 bytes.
  const double kept = 2.0 * 202048 * 5120 + 48.0 * 5120 * 16;
  CHECK(r.model->unquantized_params() == Approx(kept));
  CHECK(fp8 == Approx((bf16 + kept * 2 / 2) / 2));
}

TEST_CASE("A GPU's device memory is what it reports, not its vendor GB, when the file says so",
          "[memory]") {
  // L40S "48 GB" of GDDR6 with ECC on reports 46,068 MiB; H100 "80 GB" is read as 80 GiB.
  const ReplicaSpec r = shipped("l40s", "meta-llama/Llama-2-7b-hf");
  CHECK(plan_kv_memory(r, 0.9, 16, 2048, 128).gpu_bytes == 46068.0 * 1048576);
  CHECK(plan_kv_memory(shipped("h100-sxm", "meta-llama/Llama-2-7b-hf"), 0.9, 16, 2048, 128)
            .gpu_bytes == 80.0 * 1073741824);
  GpuSpec l40s = *r.gpu;
  l40s.device_memory_mib = 0;  // without the reported size: 48 GiB, more blocks
  ReplicaSpec vendor = r;
  vendor.gpu = &l40s;
  CHECK(plan_kv_memory(vendor, 0.9, 16, 2048, 128).num_blocks >
        plan_kv_memory(r, 0.9, 16, 2048, 128).num_blocks);
}

TEST_CASE("Pipeline stages split the layers as vLLM does, sparing the last stage", "[memory]") {
  CHECK(pp_stage_layers(80, 4) == std::vector<int>{20, 20, 20, 20});
  CHECK(pp_stage_layers(32, 3) == std::vector<int>{11, 11, 10});
  CHECK(pp_stage_layers(30, 4) == std::vector<int>{7, 8, 8, 7});  // r = 2 ≤ pp − 2: the middle
  CHECK(pp_stage_layers(31, 4) == std::vector<int>{8, 8, 8, 7});
  CHECK(pp_stage_layers(5, 1) == std::vector<int>{5});
}

TEST_CASE(
    "Pipeline stages hold the embedding first and the LM head and logits last, and the stage "
    "with the fewest blocks sets the cache",
    "[memory]") {
  ReplicaSpec r = shipped("h100-sxm", "meta-llama/Llama-2-70b-hf", 2);
  const ModelSpec& m = *r.model;
  const MemoryPlan one = plan_kv_memory(r, 0.9, 16, 2048, 128);
  r.pp = 4;
  const MemoryPlan four = plan_kv_memory(r, 0.9, 16, 2048, 128);
  // 80 layers, 20 a stage. The first stage holds the embedding, the last the LM head and the
  // sampler's logits: the last has the fewest blocks.
  const double table = 32000.0 * 8192;
  const double layer = (m.num_params() - 2 * table) / 80;
  CHECK(four.stage == 3);
  CHECK(four.weight_bytes == Approx((20 * layer + table) * 2 / 2));
  CHECK(four.activation_bytes == Approx(one.activation_bytes));  // both are last stages
  // 20 layers × K,V × 4 KV heads per GPU × 128 × 2 bytes × 16 tokens.
  CHECK(four.block_bytes == Approx(20.0 * 2 * 4 * 128 * 2 * 16));
  CHECK(four.num_blocks == static_cast<std::int64_t>(std::floor(
                               (0.9 * four.gpu_bytes - four.weight_bytes - four.activation_bytes) /
                               four.block_bytes)));
  // Spreading the two tables evenly (a quarter of both on every stage) would have promised more.
  const double even_weights = (20 * layer + 2 * table / 4) * 2 / 2;
  CHECK(
      static_cast<double>(four.num_blocks) <
      std::floor((0.9 * four.gpu_bytes - even_weights - four.activation_bytes) / four.block_bytes));
  // A model with tied embeddings keeps one table on one stage, and a copy on the last of many.
  ReplicaSpec tied = shipped("h100-sxm", "meta-llama/Llama-3.2-1B");
  REQUIRE(tied.model->tie_word_embeddings);
  const double t = static_cast<double>(tied.model->vocab_size) * tied.model->hidden_size;
  const double one_stage = plan_kv_memory(tied, 0.9, 16, 2048, 128).weight_bytes;
  CHECK(one_stage == Approx(tied.model->num_params() * 2));
  tied.pp = 2;
  const MemoryPlan two = plan_kv_memory(tied, 0.9, 16, 2048, 128);
  CHECK(two.stage == 1);
  CHECK(two.weight_bytes == Approx((tied.model->num_params() - t) / 2 * 2 + t * 2));
}

TEST_CASE("Interleaved MoE stages weigh the experts of their own layers", "[memory]") {
  // Mixtral's dimensions with experts in every second layer (layers 1, 3, 5, …, as HF's
  // interleave step counts them): at pp 3 the stages hold layers 0–10, 11–21 and 22–31, with
  // 5, 6 and 5 MoE layers.
  ModelSpec m = catalog().model("mistralai/Mixtral-8x7B-v0.1", ConfigNode::flag("test"));
  m.moe_layer_interval = 2;
  CHECK_FALSE(m.is_moe_layer(0));
  CHECK(m.is_moe_layer(1));
  CHECK(m.is_moe_layer(31));
  CHECK(m.moe_layers() == 16);
  ReplicaSpec r = shipped("h100-sxm", "mistralai/Mixtral-8x7B-v0.1", 2);
  r.model = &m;
  r.pp = 3;
  const MemoryPlan plan = plan_kv_memory(r, 0.9, 16, 2048, 128);
  const double table = static_cast<double>(m.vocab_size) * m.hidden_size;
  const double dense = m.layer_params(false);
  const double moe = m.layer_params(true);
  const double weights[] = {(6 * dense + 5 * moe + table) * 2 / 2, (5 * dense + 6 * moe) * 2 / 2,
                            (5 * dense + 5 * moe + table) * 2 / 2};
  const int layers[] = {11, 11, 10};
  const double kv_layer_block = 2.0 * (8 / 2) * 128 * 2 * 16;  // K,V × 4 KV heads per GPU
  const MemoryPlan one =
      plan_kv_memory(shipped("h100-sxm", "mistralai/Mixtral-8x7B-v0.1", 2), 0.9, 16, 2048, 128);
  const double logits = 128.0 * m.vocab_size * 4;
  std::int64_t fewest = 0;
  int stage = -1;
  for (int s = 0; s < 3; ++s) {
    const double act = one.activation_bytes - (s == 2 ? 0.0 : logits);
    const auto blocks = static_cast<std::int64_t>(
        std::floor((0.9 * plan.gpu_bytes - weights[s] - act) / (layers[s] * kv_layer_block)));
    if (stage < 0 || blocks < fewest) {
      fewest = blocks;
      stage = s;
    }
  }
  CHECK(plan.stage == stage);
  CHECK(plan.num_blocks == fewest);
  CHECK(plan.weight_bytes == Approx(weights[stage]));
  // The whole model is still the sum of its layers and tables.
  CHECK(m.num_params() == Approx(16 * dense + 16 * moe + 2 * table));
}
