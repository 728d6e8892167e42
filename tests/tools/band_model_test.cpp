// The parts of a band, in process: how a step is classed, how a regime's quantiles give a factor,
// and how the step-kind scaling applies a draw's factors to the steps of one GPU only.
#include <catch2/catch.hpp>

#include "run/error_model.hpp"
#include "run/step_kind_scaled_cost_model.hpp"

namespace servesim {
namespace {

// Every step costs 1000 ns and 2 J.
class FixedCost final : public CostModel {
 public:
  std::string_view name() const override { return "fixed"; }
  StepCost step(const BatchShape&, const ReplicaSpec&) const override {
    StepCost c;
    c.total_ns = 1000;
    c.energy_j = 2;
    return c;
  }
};

BatchShape shape(std::int32_t prefill_tokens, std::size_t decodes) {
  BatchShape b;
  if (prefill_tokens > 0) b.prefills.push_back({prefill_tokens, 0});
  b.decode_contexts.assign(decodes, 100);
  return b;
}

}  // namespace

TEST_CASE("a step is prefill-heavy from half its tokens, else decode at low or high batch",
          "[bands]") {
  CHECK(step_kind(shape(512, 0)) == StepKind::kPrefill);
  CHECK(step_kind(shape(32, 32)) == StepKind::kPrefill);
  CHECK(step_kind(shape(31, 32)) == StepKind::kDecodeLow);
  CHECK(step_kind(shape(0, 63)) == StepKind::kDecodeLow);
  CHECK(step_kind(shape(0, 64)) == StepKind::kDecodeHigh);
  CHECK(step_kind(shape(10, 200)) == StepKind::kDecodeHigh);
}

TEST_CASE("a regime's log-ratio is linear between its 10th, 50th and 90th percentiles", "[bands]") {
  const ErrorQuantiles q{-0.1, 0.02, 0.3, 40};
  CHECK(q.log_ratio_at(0.1) == Approx(-0.1));
  CHECK(q.log_ratio_at(0.3) == Approx(-0.04));
  CHECK(q.log_ratio_at(0.5) == Approx(0.02));
  CHECK(q.log_ratio_at(0.7) == Approx(0.16));
  CHECK(q.log_ratio_at(0.9) == Approx(0.3));
}

TEST_CASE("step-kind scaling applies one factor per kind to its GPU's steps only", "[bands]") {
  const FixedCost inner;
  GpuSpec scaled_gpu, other_gpu;
  ReplicaSpec on, off;
  on.gpu = &scaled_gpu;
  off.gpu = &other_gpu;
  const StepKindScaledCostModel m(inner, {{&scaled_gpu, StepKindFactors{1.5, 0.8, 1.25}}});
  CHECK(m.step(shape(512, 0), on).total_ns == 1500);
  CHECK(m.step(shape(0, 8), on).total_ns == 800);
  CHECK(m.step(shape(0, 128), on).total_ns == 1250);
  CHECK(m.step(shape(0, 128), on).energy_j == Approx(2.5));
  CHECK(m.step(shape(512, 0), off).total_ns == 1000);
  CHECK_THROWS(StepKindScaledCostModel(inner, {{&scaled_gpu, StepKindFactors{1, 0, 1}}}));
}

TEST_CASE("the shipped error model loads, classes unlisted GPUs as datasheet, measures home",
          "[bands]") {
  const ErrorModel m = ErrorModel::load(ErrorModel::default_path());
  CHECK(m.gpu_class("a100-80gb") == "home");
  CHECK(m.gpu_class("b200") == "datasheet");
  for (std::size_t k = 0; k < kNumStepKinds; ++k) {
    const auto kind = static_cast<StepKind>(k);
    const auto q = m.find("analytical", "home", kind);
    REQUIRE(q);
    CHECK(q->p10 <= q->p50);
    CHECK(q->p50 <= q->p90);
    CHECK(q->n >= 5);
    CHECK_FALSE(m.find("analytical", "datasheet", kind));
    CHECK_FALSE(m.find("rf", "home", kind));
  }
}

}  // namespace servesim
