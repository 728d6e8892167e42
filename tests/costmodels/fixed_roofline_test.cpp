#include <catch2/catch.hpp>

#include "costmodels/fixed/fixed_cost_model.hpp"
#include "costmodels/roofline/roofline_cost_model.hpp"
#include "sim/config/input_error.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

TEST_CASE("the fixed model adds prefill tokens, a per-step decode cost and respects its floor",
          "[costmodels][fixed]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const ReplicaSpec r = testing::replica_of(gpu, model);
  const FixedCostModel cm(FixedCostModel::parse(
      ConfigNode::parse("kind: fixed\nprefill_ns_per_token: 100\ndecode_ns_per_step: 5000\n"
                        "decode_ns_per_request: 10\nstep_floor_ns: 2000",
                        "fixed.yaml")));
  BatchShape b;
  b.prefills.push_back({300, 0});
  b.decode_contexts = {5, 6, 7};
  CHECK(cm.step(b, r).total_ns == 300 * 100 + 5000 + 3 * 10);
  BatchShape small;
  small.prefills.push_back({3, 0});
  const StepCost c = cm.step(small, r);
  CHECK(c.total_ns == 2000);
  CHECK(c[CostComponent::kHost] == Approx(1700));
}

namespace {
// The fixed model with a request overhead of 7 ms.
class FixedWithOverhead final : public CostModel {
 public:
  std::string_view name() const override { return "fixed"; }
  StepCost step(const BatchShape& b, const ReplicaSpec& r) const override {
    return fixed_.step(b, r);
  }
  SimTime request_overhead_ns() const override { return 7'000'000; }

 private:
  FixedCostModel fixed_{FixedCostModel::Params{100, 5000, 10, 2000}};
};
}  // namespace

TEST_CASE("a scaled cost model multiplies step times and their breakdown, not request overhead",
          "[costmodels][fixed][scaled]") {
  const ReplicaSpec r = testing::replica_of(testing::a100_like(), testing::llama2_7b_like());
  const FixedWithOverhead inner;
  BatchShape b;
  b.prefills.push_back({300, 0});
  b.decode_contexts = {5, 6, 7};
  const StepCost base = inner.step(b, r);
  REQUIRE(base.total_ns == 35030);
  const ScaledCostModel up(inner, 1.02);
  const StepCost c = up.step(b, r);
  CHECK(c.total_ns == 35731);  // 35030 × 1.02 = 35730.6, rounded
  for (std::size_t i = 0; i < kNumCostComponents; ++i) {
    CHECK(c.breakdown_ns[i] == Approx(base.breakdown_ns[i] * 1.02));
  }
  CHECK(up.name() == "fixed");
  CHECK(up.request_overhead_ns() == 7'000'000);
  CHECK(ScaledCostModel(inner, 0.5).step(b, r).total_ns == 17515);
  CHECK_THROWS_AS(ScaledCostModel(inner, 0), InputError);
  CHECK_THROWS_AS(ScaledCostModel(inner, -1), InputError);
}

TEST_CASE("the roofline model is memory-bound at one token and compute-bound at many",
          "[costmodels][roofline]") {
  const GpuSpec gpu = testing::a100_like();
  ModelSpec model = testing::llama2_7b_like();
  model.num_layers = 1;
  const ReplicaSpec r = testing::replica_of(gpu, model);
  const RooflineCostModel cm(RooflineCostModel::parse(ConfigNode::parse("kind: roofline", "r")));
  // One token: weight bytes of qkv+o+gate_up+down (4096·12288 + 4096² + 4096·22016 + 11008·4096
  // params at 2 B), plus tiny activations, at 2039 GB/s.
  BatchShape one;
  one.prefills.push_back({1, 0});
  const double params = 4096.0 * 12288 + 4096.0 * 4096 + 4096.0 * 22016 + 11008.0 * 4096;
  const StepCost c1 = cm.step(one, r);
  CHECK(c1[CostComponent::kGemm] == Approx(params * 2 / 2039).epsilon(0.01));
  // 8192 tokens: 2·M·params FLOPs at 312 TFLOP/s.
  BatchShape big;
  big.prefills.push_back({8192, 0});
  const StepCost c2 = cm.step(big, r);
  CHECK(c2[CostComponent::kGemm] == Approx(2 * 8192 * params / 312e3).epsilon(0.001));
}

TEST_CASE("roofline GEMM time shrinks with tensor parallelism and pays for all-reduces",
          "[costmodels][roofline]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const RooflineCostModel cm(RooflineCostModel::parse(ConfigNode::parse("kind: roofline", "r")));
  BatchShape b;
  b.prefills.push_back({4096, 0});
  const StepCost t1 = cm.step(b, testing::replica_of(gpu, model, 1));
  const StepCost t4 = cm.step(b, testing::replica_of(gpu, model, 4));
  CHECK(t4[CostComponent::kGemm] == Approx(t1[CostComponent::kGemm] / 4).epsilon(0.01));
  CHECK(t1[CostComponent::kCollective] == 0);
  // 2 all-reduces · 2·3/4 · 4096·4096·2 B / 300 GB/s per layer, 32 layers.
  CHECK(t4[CostComponent::kCollective] ==
        Approx(32 * 2 * 1.5 * 4096.0 * 4096 * 2 / 300).epsilon(1e-6));
}
