// Multi-LoRA serving end to end: `simulate` with a `lora:` section, its summary, what adapters
// and slots cost, determinism, and every key's bad input.
#include <catch2/catch.hpp>

#include "tests/tools/bad_input.hpp"
#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

constexpr const char* kLora = "tests/tools/configs/lora.yaml";

nlohmann::json lora_summary_of(const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), kLora);
  return read_json(run_ok(name, args) / "summary.json");
}

double lora_makespan(const nlohmann::json& s) { return s["makespan_s"].get<double>(); }

}  // namespace

TEST_CASE("a multi-LoRA run reports its loads and never holds more adapters than slots", "[lora]") {
  const auto s = lora_summary_of("lora_run", {});
  REQUIRE(s.contains("lora"));
  const auto& l = s["lora"];
  CHECK(s["requests"]["finished"] == 150);
  CHECK(l["max_loras"] == 2);
  CHECK(l["max_distinct_adapters_per_step"].get<int>() <= 2);
  CHECK(l["max_distinct_adapters_per_step"].get<int>() >= 1);
  CHECK(l["max_slots_used"] == 2);
  CHECK(l["mean_distinct_adapters_per_step"].get<double>() > 0);
  CHECK(l["mean_distinct_adapters_per_step"].get<double>() <= 2);
  // 16 adapters through 4 host slots: every adapter is read from disk at least once.
  CHECK(l["loads_from_disk"].get<int>() >= 16);
  CHECK(l["load_s"].get<double>() > 0);
  // The same seed gives the same run.
  const auto again = lora_summary_of("lora_run_again", {});
  CHECK(again["lora"] == l);
  CHECK(lora_makespan(again) == lora_makespan(s));
}

TEST_CASE("more adapter slots and a larger host cache load less", "[lora]") {
  const auto tight = lora_summary_of("lora_tight", {});
  const auto roomy = lora_summary_of(
      "lora_roomy", {"--set", "lora.max_loras=16", "--set", "lora.max_cpu_loras=16"});
  // Every adapter fits on the GPU: each is read from disk once, never evicted.
  CHECK(roomy["lora"]["loads_from_disk"].get<int>() <= 16);
  CHECK(roomy["lora"]["loads_from_disk"] == roomy["lora"]["max_slots_used"]);
  CHECK(roomy["lora"]["loads_from_cpu"] == 0);
  CHECK(roomy["lora"]["load_s"].get<double>() < tight["lora"]["load_s"].get<double>());
  CHECK(roomy["lora"]["max_distinct_adapters_per_step"].get<int>() > 2);
}

TEST_CASE("higher ranks cost more than lower ones, and the base model least", "[lora]") {
  // Slots for every adapter, so that only the kernels and the loads differ between the runs.
  const std::vector<std::string> roomy{"--set", "lora.max_loras=16", "--set",
                                       "lora.max_cpu_loras=16"};
  auto with = [&roomy](std::vector<std::string> extra) {
    extra.insert(extra.end(), roomy.begin(), roomy.end());
    return extra;
  };
  const auto tpot = [](const nlohmann::json& s) {
    return s["latency_ms"]["tpot"]["mean"].get<double>();
  };
  const auto base = lora_summary_of("lora_base_only", with({"--set", "lora.base_fraction=1"}));
  CHECK(base["lora"]["loads_from_disk"] == 0);
  CHECK(base["lora"]["mean_distinct_adapters_per_step"].get<double>() == 0);
  const auto rank16 = lora_summary_of("lora_rank16", with({}));
  const auto rank64 = lora_summary_of("lora_rank64", with({"--set", "lora.rank=64"}));
  CHECK(tpot(rank16) > tpot(base));
  CHECK(tpot(rank64) > tpot(rank16));
  CHECK(rank64["lora"]["load_s"].get<double>() > rank16["lora"]["load_s"].get<double>());
}

TEST_CASE("every lora key is checked before the run", "[lora][errors]") {
  using Catch::Matchers::Contains;
  const auto bad = [](const std::string& name, const std::string& set) {
    return bad_input_message(name, {kLora, "--set", set});
  };
  CHECK_THAT(bad("lora_adapters0", "lora.num_adapters=0"),
             Contains("lora.num_adapters") && Contains("expected an integer from 1 to 100000"));
  CHECK_THAT(bad("lora_rank0", "lora.rank=0"), Contains("expected a rank from 1 to 512, got 0"));
  CHECK_THAT(bad("lora_zipf", "lora.zipf_s=-1"), Contains("lora.zipf_s"));
  CHECK_THAT(bad("lora_base", "lora.base_fraction=1.5"), Contains("lora.base_fraction"));
  CHECK_THAT(bad("lora_slots", "lora.max_loras=0"), Contains("lora.max_loras"));
  CHECK_THAT(bad("lora_cpu", "lora.max_cpu_loras=1"),
             Contains("expected an integer from max_loras (2)"));
  CHECK_THAT(bad("lora_disk", "lora.disk_gb_per_s=0"), Contains("lora.disk_gb_per_s"));
  CHECK_THAT(bad("lora_key", "lora.max_lora=3"), Contains("max_lora"));
  CHECK_THAT(bad("lora_both", "lora.ranks=[8, 16]"), Contains("expected exactly one of rank"));
  CHECK_THAT(bad("lora_router", "router.kind=global_queue"), Contains("holds a fleet queue"));
  CHECK_THAT(bad_input_message("lora_affinity_key", {kLora, "--set", "router.kind=lora_affinity",
                                                     "--set", "router.max_holders=0"}),
             Contains("router.max_holders"));
  CHECK_THAT(bad_input_message("lora_module", {"tests/tools/bad/lora_bad_module.yaml"}),
             Contains("tests/tools/bad/lora_bad_module.yaml:9:68") &&
                 Contains("unknown target module 'qkv'"));
}

TEST_CASE("sessions under multi-LoRA serving run every turn of every session", "[lora][sessions]") {
  const auto s = read_json(run_ok("lora_sessions", {"tests/tools/configs/lora_sessions.yaml"}) /
                           "summary.json");
  REQUIRE(s.contains("sessions"));
  const auto& sessions = s["sessions"];
  CHECK(sessions["started"] == 30);
  CHECK(sessions["completed"] == 30);
  CHECK(sessions["ended_by_rejection"] == 0);
  CHECK(sessions["requests_finished"] == 30 * 4);
  CHECK(s["requests"]["finished"] == 30 * 4);
  REQUIRE(s.contains("lora"));
  CHECK(s["lora"]["loads_from_disk"].get<int>() >= 1);
  CHECK(s["prefix_cache"]["hit_rate"].get<double>() > 0);
}

}  // namespace servesim::test
