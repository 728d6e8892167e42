// `costmodel rank --bands`: an order with a clear margin holds in every band draw, a close order
// between GPUs whose errors differ flips in some, and a GPU with no data is unmeasured.
#include "tools/costmodel/rank_flips.hpp"

#include <catch2/catch.hpp>

namespace servesim::decide {
namespace {

GpuSpec named(const std::string& name) {
  GpuSpec g;
  g.name = name;
  return g;
}

const ErrorModel& shipped() {
  static const ErrorModel m = ErrorModel::load(ErrorModel::default_path());
  return m;
}

}  // namespace

TEST_CASE("a GPU order with a clear margin holds in every band draw", "[rank][bands]") {
  const GpuSpec a100 = named("a100-80gb"), h100 = named("h100-sxm");
  const std::vector<Prediction> p = {{"a100-80gb", 10.0, 0.03}, {"h100-sxm", 4.0, 0.07}};
  const auto f = rank_flips(p, {&a100, &h100}, StepKind::kPrefill, "analytical", shipped(), 7);
  REQUIRE(f["status"] == "measured");
  CHECK(f["draws"] == 7);
  CHECK(f["holds"] == 7);
  CHECK(f["others"].empty());
  CHECK(rank_flips_text(f) == "order holds in 7 of 7 draws");
}

TEST_CASE("a close GPU order flips where the two regimes' errors differ", "[rank][bands]") {
  // With no stated uncertainty, 4% apart: the hbm class's high-batch decode error (p10 0.95,
  // p90 1.22) against the home GPU's (0.955, 1.136) reorders them at the 90th percentile.
  const GpuSpec a100 = named("a100-80gb"), h100 = named("h100-sxm");
  const std::vector<Prediction> p = {{"a100-80gb", 1.00, 0}, {"h100-sxm", 0.96, 0}};
  const auto f = rank_flips(p, {&a100, &h100}, StepKind::kDecodeHigh, "analytical", shipped(), 5);
  REQUIRE(f["status"] == "measured");
  CHECK(f["holds"].get<int>() < 5);
  REQUIRE(f["others"].size() == 1);
  CHECK(f["others"][0]["ranking"] == "a100-80gb < h100-sxm");
}

TEST_CASE("a GPU without validation data makes the order unmeasured", "[rank][bands]") {
  const GpuSpec a100 = named("a100-80gb"), b200 = named("b200");
  const std::vector<Prediction> p = {{"a100-80gb", 10.0, 0.03}, {"b200", 2.0, 0.1}};
  const auto f = rank_flips(p, {&a100, &b200}, StepKind::kPrefill, "analytical", shipped(), 5);
  CHECK(f["status"] == "unmeasured");
  CHECK(f["unmeasured"] == nlohmann::json::array({"analytical/datasheet/prefill (b200)"}));
  CHECK(rank_flips_text(f) ==
        "order unmeasured: no validation data for analytical/datasheet/prefill (b200)");
}

}  // namespace servesim::decide
