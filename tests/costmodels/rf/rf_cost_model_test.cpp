#include "costmodels/rf/rf_cost_model.hpp"

#include <filesystem>

#include <catch2/catch.hpp>

#include "../test_specs.hpp"
#include "costmodels/registry.hpp"
#include "rf_test_support.hpp"
#include "sim/config/input_error.hpp"

using namespace servesim;

namespace {

BatchShape prefill(std::int32_t tokens) {
  BatchShape b;
  b.prefills.push_back({tokens, 0});
  return b;
}

std::unique_ptr<CostModel> make(const testing::TempDir& dir, const std::string& kind,
                                const std::string& extra = "") {
  return make_cost_model(ConfigNode::parse(
      "kind: " + kind + "\ngpu: a100\nprofiles: " + dir.str() + "\ncache_dir: " + dir.str() +
          "/cache\ntrees: 20\ndepths: [8]\ncv_folds: 0\n" + "table_max_tokens: 2048\n" + extra,
      "rf.yaml"));
}

}  // namespace

TEST_CASE("the rf cost model prices a step as layers × the profiled ops plus analytical parts",
          "[costmodels][rf]") {
  testing::TempDir dir;
  testing::write_file(dir.path() / "a100/meta-llama/Llama-2-7b-hf/mlp.csv",
                      testing::synthetic_mlp({1, 2}));
  const auto cm = make(dir, "rf");
  CHECK(cm->name() == "rf");
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();  // matched by its dimensions
  const ReplicaSpec r = testing::replica_of(gpu, model, 1);
  const StepCost c = cm->step(prefill(256), r);
  const RfTables& t = dynamic_cast<const RfCostModel&>(*cm).loaded(r).tables;
  double gemm_ms = 0;
  for (VidurOp op : {VidurOp::kAttnPreProj, VidurOp::kAttnPostProj, VidurOp::kMlpUpProj,
                     VidurOp::kMlpDownProj}) {
    gemm_ms += t.op_ms(op, 256);
  }
  CHECK(c[CostComponent::kGemm] == Approx(32 * gemm_ms * 1e6));
  // Synthetic op i takes a + b·tokens with a = 0.005·(i+1), b = 0.0004·(i%4+1); the GEMMs are
  // ops 2, 4, 6, 8. The forest must land near the truth.
  CHECK(gemm_ms ==
        Approx((0.015 + 0.025 + 0.035 + 0.045) + 256 * 0.0004 * (3 + 1 + 3 + 1)).epsilon(0.02));
  CHECK(c[CostComponent::kAttention] > 0);
  CHECK(c[CostComponent::kHost] > 0);
  CHECK(c[CostComponent::kCollective] == 0);  // TP 1
  double sum = 0;
  for (double v : c.breakdown_ns) sum += v;
  CHECK(static_cast<double>(c.total_ns) == Approx(sum).margin(1));
  // Past the profile's 512 tokens the ops grow linearly.
  const StepCost big = cm->step(prefill(1024), r);
  CHECK(big[CostComponent::kGemm] ==
        Approx(2 * 32 * 1e6 *
               (t.op_ms(VidurOp::kAttnPreProj, 512) + t.op_ms(VidurOp::kAttnPostProj, 512) +
                t.op_ms(VidurOp::kMlpUpProj, 512) + t.op_ms(VidurOp::kMlpDownProj, 512))));
}

TEST_CASE("rf_scaled makes a faster target cheaper and rf leaves it verbatim", "[costmodels][rf]") {
  testing::TempDir dir;
  testing::write_file(dir.path() / "a100/meta-llama/Llama-2-7b-hf/mlp.csv",
                      testing::synthetic_mlp({1, 2}));
  const auto rf = make(dir, "rf");
  const auto scaled = make(dir, "rf_scaled");
  const auto hybrid = make(dir, "rf_scaled", "scale: analytical\n");
  const GpuSpec h100 = testing::h100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const ReplicaSpec r = testing::replica_of(h100, model, 2);
  const StepCost v = rf->step(prefill(512), r);
  const StepCost s = scaled->step(prefill(512), r);
  const StepCost h = hybrid->step(prefill(512), r);
  CHECK(s[CostComponent::kGemm] < 0.7 * v[CostComponent::kGemm]);
  CHECK(s[CostComponent::kLight] < v[CostComponent::kLight]);
  CHECK(h[CostComponent::kGemm] < v[CostComponent::kGemm]);
  CHECK(h[CostComponent::kGemm] != s[CostComponent::kGemm]);
  CHECK(v[CostComponent::kCollective] > 0);  // TP 2: analytical all-reduce (no network file)
}

TEST_CASE("rf config errors name the key and the valid values", "[costmodels][rf]") {
  testing::TempDir dir;
  testing::write_file(dir.path() / "a100/meta-llama/Llama-2-7b-hf/mlp.csv",
                      testing::synthetic_mlp({1}));
  CHECK_THROWS_WITH(make(dir, "rf", "scale: roofline\n"), Catch::Contains("scale"));
  CHECK_THROWS_WITH(make(dir, "rf_scaled", "scale: magic\n"),
                    Catch::Contains("known: analytical, roofline"));
  CHECK_THROWS_WITH(
      make_cost_model(ConfigNode::parse("kind: rf\ngpu: a100\nprofiles: /nonexistent", "rf.yaml")),
      Catch::Contains("rf.yaml:3"));
  CHECK_THROWS_WITH(make(dir, "rf", "network: " + dir.str() + "\n"),
                    Catch::Contains("all_reduce.csv"));
  const auto cm = make(dir, "rf");
  const GpuSpec gpu = testing::a100_like();
  ModelSpec other = testing::llama2_7b_like();
  other.name = "x/other";
  other.hidden_size = 5120;
  CHECK_THROWS_WITH(cm->step(prefill(8), testing::replica_of(gpu, other, 1)),
                    Catch::Contains("no profile for model 'x/other'"));
}

TEST_CASE("rf and rf_scaled keep the cost-model contract on a real profile",
          "[costmodels][rf][contract][data]") {
  const std::string dir = testing::data_compute_dir();
  REQUIRE(std::filesystem::exists(dir + "/a100/meta-llama/Llama-2-7b-hf/mlp.csv"));
  testing::TempDir cache;
  const GpuSpec gpu = testing::h100_like();
  const ModelSpec model = testing::llama2_7b_like();  // matches Llama-2-7b-hf by dimensions
  for (const std::string kind : {"rf", "rf_scaled"}) {
    INFO("kind " << kind);
    const auto cm = make_cost_model(ConfigNode::parse(
        "kind: " + kind + "\ngpu: a100\nprofiles: " + dir + "\ncache_dir: " + cache.str() +
            "\ntrees: 50\ndepths: [8]\ncv_folds: 0\ntable_max_tokens: 4096",
        "contract"));
    for (int tp : {1, 2}) {
      const ReplicaSpec r = testing::replica_of(gpu, model, tp);
      SimTime prev = 0;
      for (std::int32_t t : {1, 16, 128, 512, 2048, 4096, 8192}) {
        const StepCost c = cm->step(prefill(t), r);
        CHECK(c.total_ns >= prev);
        prev = c.total_ns;
      }
      CHECK(cm->step(BatchShape{}, r).total_ns == 0);
    }
  }
}
