#include "costmodels/registry.hpp"

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "sim/input_error.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

namespace {

BatchShape prefill_batch(std::int32_t tokens) {
  BatchShape b;
  b.prefills.push_back({tokens, 0});
  return b;
}

BatchShape decode_batch(int n, std::int32_t ctx) {
  BatchShape b;
  b.decode_contexts.assign(static_cast<std::size_t>(n), ctx);
  return b;
}

// The smallest valid section of each kind: `kind:` alone, except the profile-trained ones, which
// get the shipped A100 profile, a scratch cache and a small forest (empty when the data is absent).
std::string minimal_section(const std::string& kind) {
  if (kind != "rf" && kind != "rf_scaled") return "kind: " + kind;
  const std::filesystem::path profiles =
      std::filesystem::path(SERVESIM_SHARED_DIR) / "data/vidur/profiling/compute";
  if (!std::filesystem::is_directory(profiles)) return "";
  const auto cache = std::filesystem::path(SERVESIM_BINARY_DIR) / "tests/costmodels/contract_cache";
  return "kind: " + kind + "\ngpu: a100\nprofiles: " + profiles.string() +
         "\ncache_dir: " + cache.string() + "\ntrees: 50\ndepths: [8]\ncv_folds: 0";
}

}  // namespace

TEST_CASE(
    "every registered cost model prices a non-empty batch and never gets faster with more "
    "tokens",
    "[costmodels][contract]") {
  const GpuSpec gpu = testing::a100_like();
  const ModelSpec model = testing::llama2_7b_like();
  const std::vector<std::string> kinds = cost_model_kinds();
  REQUIRE(kinds.size() >= 2);
  for (const std::string& kind : kinds) {
    INFO("kind " << kind);
    const std::string section = minimal_section(kind);
    if (section.empty()) {
      WARN("skipping " << kind << ": ../shared/data/vidur is absent");
      continue;
    }
    const auto cm = make_cost_model(ConfigNode::parse(section, "contract"));
    REQUIRE(cm->name() == kind);
    for (int tp : {1, 2, 4}) {
      const ReplicaSpec r = testing::replica_of(gpu, model, tp);
      INFO("tp " << tp);
      SimTime prev = 0;
      for (std::int32_t t : {1, 16, 128, 512, 2048, 8192}) {
        const StepCost c = cm->step(prefill_batch(t), r);
        CHECK(c.total_ns >= 1);
        CHECK(c.total_ns >= prev);
        prev = c.total_ns;
      }
      prev = 0;
      for (int n : {1, 8, 64, 256}) {
        const StepCost c = cm->step(decode_batch(n, 1000), r);
        CHECK(c.total_ns >= 1);
        CHECK(c.total_ns >= prev);
        prev = c.total_ns;
      }
      CHECK(cm->step(BatchShape{}, r).total_ns == 0);
    }
  }
}

TEST_CASE("an unknown cost model kind is an input error that lists the known kinds",
          "[costmodels]") {
  try {
    (void)make_cost_model(ConfigNode::parse("kind: rooflin", "cm.yaml"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("cm.yaml:1:7"));
    CHECK_THAT(msg, Catch::Contains("unknown cost model 'rooflin'"));
    CHECK_THAT(msg, Catch::Contains("fixed"));
    CHECK_THAT(msg, Catch::Contains("roofline"));
  }
}

TEST_CASE("an unknown key in a cost model section is an input error", "[costmodels]") {
  for (const std::string& kind : cost_model_kinds()) {
    INFO("kind " << kind);
    CHECK_THROWS_AS(make_cost_model(ConfigNode::parse("kind: " + kind + "\nbogus_key: 1", "x")),
                    InputError);
  }
}
