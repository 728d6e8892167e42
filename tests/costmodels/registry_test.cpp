#include "costmodels/registry.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
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
// get data/'s A100 profile, a scratch cache and a small forest.
std::string minimal_section(const std::string& kind) {
  if (!find_cost_model(kind)->capabilities.needs_profiles) return "kind: " + kind;
  const std::filesystem::path profiles =
      std::filesystem::path(SERVESIM_DATA_DIR) / "vidur/profiling/compute";
  REQUIRE(std::filesystem::is_directory(profiles));
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

TEST_CASE("every cost model entry builds models that do what it declares",
          "[costmodels][contract]") {
  const std::vector<std::string> kinds = cost_model_kinds();
  CHECK(std::is_sorted(kinds.begin(), kinds.end()));
  for (const CostModelEntry& entry : cost_model_entries()) {
    const std::string kind(entry.kind);
    INFO("kind " << kind);
    CHECK(find_cost_model(kind) == &entry);
    if (entry.capabilities.needs_profiles) {
      // Without its profiles it cannot be built; the error names what is missing.
      CHECK_THROWS_AS(make_cost_model(ConfigNode::parse("kind: " + kind, "x")), InputError);
    }
    const std::string section = minimal_section(kind);
    const auto cm = make_cost_model(ConfigNode::parse(section, "contract"));
    CHECK(cm->prices_power_cap() == entry.capabilities.prices_power_cap);
    if (!entry.capabilities.engine_profile) {
      CHECK_THROWS_AS(make_cost_model(ConfigNode::parse(section + "\nengine: x", "x")), InputError);
    }
  }
  CHECK(find_cost_model("rooflin") == nullptr);
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

TEST_CASE(
    "an engine profile changes the constants of the GPUs it names, and carries only its host "
    "floors to the others",
    "[costmodels][engine]") {
  Catalog catalog(Catalog::default_dirs());
  const GpuSpec& h100 = catalog.gpu("h100", ConfigNode::parse("x", "test"));
  const GpuSpec& a100 = catalog.gpu("a100", ConfigNode::parse("x", "test"));
  const ModelSpec model = testing::llama2_7b_like();
  const auto plain = make_cost_model(ConfigNode::parse("kind: analytical", "x"));
  const auto engine = make_cost_model(ConfigNode::parse(
      "{kind: analytical, engine: {name: t, gpus: {H100: {host: {graph_floor_ns: 0}, "
      "analytical: {attention: {decode_bw_fraction: 0.35}}}}}}",
      "x"));
  const BatchShape decodes = decode_batch(64, 1000);
  const StepCost p = plain->step(decodes, testing::replica_of(h100, model, 1));
  const StepCost e = engine->step(decodes, testing::replica_of(h100, model, 1));
  // Half the bandwidth of the hardware file's 0.7: twice the attention time; no host floor.
  CHECK(e[CostComponent::kAttention] > 1.9 * p[CostComponent::kAttention]);
  CHECK(e[CostComponent::kHost] == 0);
  CHECK(p[CostComponent::kHost] > 0);
  CHECK(e[CostComponent::kGemm] == p[CostComponent::kGemm]);
  // The A100 is not named: its attention and GEMMs are the hardware file's, and it takes the
  // H100's host floors (the engine's CPU work, not the GPU's).
  const StepCost a_plain = plain->step(decodes, testing::replica_of(a100, model, 1));
  const StepCost a_engine = engine->step(decodes, testing::replica_of(a100, model, 1));
  CHECK(a_engine[CostComponent::kAttention] == a_plain[CostComponent::kAttention]);
  CHECK(a_engine[CostComponent::kGemm] == a_plain[CostComponent::kGemm]);
  CHECK(a_plain[CostComponent::kHost] > 0);
  CHECK(a_engine[CostComponent::kHost] == 0);
  // A listed GPU whose section states no host floors takes the carried ones too.
  const auto listed = make_cost_model(ConfigNode::parse(
      "{kind: analytical, engine: {name: t, gpus: {H100: {host: {graph_floor_ns: 7000}}, "
      "A100: {analytical: {attention: {decode_bw_fraction: 0.35}}}}}}",
      "x"));
  const StepCost a_listed = listed->step(decodes, testing::replica_of(a100, model, 1));
  CHECK(a_listed[CostComponent::kHost] == Approx(7000));
  CHECK(a_listed[CostComponent::kAttention] > 1.9 * a_plain[CostComponent::kAttention]);
  // With host floors for two GPUs there is no rule to carry either: each keeps its own, and
  // the others keep their hardware file's.
  const auto two = make_cost_model(ConfigNode::parse(
      "{kind: analytical, engine: {name: t, gpus: {H100: {host: {graph_floor_ns: 0}}, "
      "A100: {host: {graph_floor_ns: 123000}}}}}",
      "x"));
  CHECK(two->step(decodes, testing::replica_of(a100, model, 1))[CostComponent::kHost] ==
        Approx(123000));
  const GpuSpec& l40s = catalog.gpu("l40s", ConfigNode::parse("x", "test"));
  CHECK(two->step(decodes, testing::replica_of(l40s, model, 1)).total_ns ==
        plain->step(decodes, testing::replica_of(l40s, model, 1)).total_ns);
}

TEST_CASE("a bad engine profile fails when the config is read, naming what was expected",
          "[costmodels][engine]") {
  const char* bad[] = {
      "{kind: analytical, engine: no-such-engine}",
      "{kind: analytical, engine: {gpus: {NoSuchGpu: {host: {graph_floor_ns: 0}}}}}",
      "{kind: analytical, engine: {gpus: {H100: {host: {graph_floor: 0}}}}}",
      "{kind: analytical, engine: {gpus: {H100: {analytical: {attention: {bogus: 1}}}}}}",
      "{kind: analytical, engine: {request_overhead_ns: -5}}",
      "{kind: analytical, engine: {colour: blue}}",
  };
  for (const char* text : bad) {
    INFO(text);
    CHECK_THROWS_AS(make_cost_model(ConfigNode::parse(text, "x")), InputError);
  }
  CHECK_THROWS_WITH(make_cost_model(ConfigNode::parse("{kind: analytical, engine: nope}", "x")),
                    Catch::Contains("vllm-v1"));
  CHECK_THROWS_WITH(
      make_cost_model(ConfigNode::parse("{kind: analytical, engine: /no/such/engine.yaml}", "x")),
      Catch::Contains("engine profile file '/no/such/engine.yaml': no such file"));
  // The shipped profile loads by name.
  CHECK_NOTHROW(make_cost_model(ConfigNode::parse("{kind: analytical, engine: vllm-v1}", "x")));
}

TEST_CASE("the analytical model reports its engine profile's request overhead",
          "[costmodels][engine]") {
  CHECK(make_cost_model(ConfigNode::parse("kind: analytical", "x"))->request_overhead_ns() == 0);
  CHECK(make_cost_model(ConfigNode::parse("kind: roofline", "x"))->request_overhead_ns() == 0);
  CHECK(make_cost_model(
            ConfigNode::parse("{kind: analytical, engine: {request_overhead_ns: 2500000}}", "x"))
            ->request_overhead_ns() == 2500000);
}

TEST_CASE("an engine profile given as a relative path is read from the config's folder",
          "[costmodels][engine]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "servesim_engine_path_test";
  fs::create_directories(dir / "engines_here");
  {
    std::ofstream(dir / "engines_here" / "mine.yaml") << "name: mine\nrequest_overhead_ns: 1234\n";
    std::ofstream(dir / "cm.yaml") << "kind: analytical\nengine: engines_here/mine.yaml\n";
  }
  const ConfigNode node = ConfigNode::load_file((dir / "cm.yaml").string());
  CHECK(make_cost_model(node)->request_overhead_ns() == 1234);
  fs::remove_all(dir);
}
