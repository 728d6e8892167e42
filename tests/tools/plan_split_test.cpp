// `plan --split` end to end and the workload.prompt_tokens filter it plans each pool with: each
// pool's pick is the least fleet meeting on its own stream, the split fleet run whole behind a
// length_split router meets, and bad combinations are errors.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPlanSmall = "tests/tools/configs/plan_small.yaml";

std::vector<std::string> split_case(const fs::path& out, const std::string& split) {
  return {kPlanSmall,
          "--gpus",
          "a100-80gb,h100-sxm",
          "--tp",
          "1",
          "--max-gpus",
          "6",
          "--slo",
          "ttft_p99_ms=500",
          "--slo",
          "tbt_p99_ms=100",
          "--prices",
          "none",
          "--price",
          "a100-80gb=2",
          "--price",
          "h100-sxm=5",
          "--no-plots",
          "--split",
          split,
          "--out",
          out.string()};
}

// simulate's summary of plan_small with extra --set arguments, written under out/<dir_name> (one
// name per test case: CTest runs them in parallel).
nlohmann::json simulate(const std::vector<std::string>& sets, const std::string& dir_name) {
  const auto dir = fresh_dir(dir_name);
  std::vector<std::string> args = {kPlanSmall, "--out", dir.string(), "--quiet"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const auto r = run_simulate(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_json(dir / "summary.json");
}

bool meets(const nlohmann::json& summary) {
  return summary["latency_ms"]["ttft"]["p99"].get<double>() <= 500 &&
         summary["latency_ms"]["tbt"]["p99"].get<double>() <= 100;
}

std::string group(const nlohmann::json& pick, int count) {
  return "{gpu: " + pick["gpu"].get<std::string>() +
         ", tp: " + std::to_string(pick["tp"].get<int>()) + ", count: " + std::to_string(count) +
         "}";
}

}  // namespace

TEST_CASE("workload.prompt_tokens keeps the requests in range and counts the rest",
          "[tools][plan]") {
  const nlohmann::json all = simulate({}, "plan_split_filter");
  const nlohmann::json kept = simulate({"workload.prompt_tokens.max=1024"}, "plan_split_filter");
  const nlohmann::json rest = simulate({"workload.prompt_tokens.min=1025"}, "plan_split_filter");
  const auto arrived = [](const nlohmann::json& s) {
    return s["requests"]["arrived"].get<std::int64_t>();
  };
  CHECK(arrived(kept) > 0);
  CHECK(arrived(rest) > 0);
  CHECK(arrived(kept) + arrived(rest) == arrived(all));
  CHECK(kept["workload_counts"]["left_out_by_prompt_tokens"] == arrived(rest));
  CHECK(kept["workload_counts"]["yielded"] == arrived(kept));
  CHECK(!all["workload_counts"].contains("left_out_by_prompt_tokens"));
  // The two streams partition the prompts, each within its range on average at least.
  const auto prompts = [](const nlohmann::json& s) {
    return s["requests"]["prompt_tokens"].get<std::int64_t>();
  };
  CHECK(prompts(kept) + prompts(rest) == prompts(all));
  CHECK(prompts(kept) <= 1024 * arrived(kept));
  CHECK(prompts(rest) >= 1025 * arrived(rest));
}

TEST_CASE("a bad prompt_tokens range is an error at its key", "[tools][plan]") {
  const auto dir = fresh_dir("plan_split_bad");
  auto r = run_simulate({kPlanSmall, "--out", dir.string(), "--quiet", "--set",
                         "workload.prompt_tokens={min: 900, max: 100}"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output,
             Catch::Contains("workload.prompt_tokens.max") || Catch::Contains("below min 900"));
  r = run_simulate({kPlanSmall, "--out", dir.string(), "--quiet", "--set",
                    "workload.prompt_tokens={most: 100}"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("most"));
}

TEST_CASE("plan --split plans each pool on its own stream and checks the split fleet whole",
          "[tools][plan]") {
  const auto dir = fresh_dir("plan_split");
  const auto r = run_plan(split_case(dir, "768,1024"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json doc = read_json(dir / "split.json");
  REQUIRE(doc["thresholds"].size() == 2);
  const nlohmann::json one = read_json(dir / "plan.json")["pick"];
  REQUIRE(!one.is_null());
  CHECK(doc["one_pool"] == one);
  for (const auto& row : doc["thresholds"]) {
    const int t = row["max_prompt_tokens"].get<int>();
    for (const auto& [pool, bound] :
         {std::pair{"short", "workload.prompt_tokens.max=" + std::to_string(t)},
          std::pair{"long", "workload.prompt_tokens.min=" + std::to_string(t + 1)}}) {
      const nlohmann::json& pick = row[pool];
      REQUIRE(!pick.is_null());
      const int n = pick["replicas"].get<int>();
      // The pool's pick meets on its own stream.
      CHECK(meets(simulate({bound, "replicas=[" + group(pick, n) + "]"}, "plan_split_check")));
      CHECK(fs::exists(dir / ("split_" + std::to_string(t)) / pool / "plan.json"));
    }
    CHECK(row["objective"].get<double>() ==
          Approx(row["short"]["objective"].get<double>() + row["long"]["objective"].get<double>()));
  }
  // The cheapest split, run whole behind a length_split router, meets as split.json says.
  const nlohmann::json& best = doc["split_pick"];
  const int t = best["max_prompt_tokens"].get<int>();
  const nlohmann::json whole = simulate(
      {"replicas=[" + group(best["short"], best["short"]["replicas"].get<int>()) + ", " +
           group(best["long"], best["long"]["replicas"].get<int>()) + "]",
       "router={kind: length_split, pools: [{name: short, groups: [0], max_prompt_tokens: " +
           std::to_string(t) + "}, {name: long, groups: [1]}]}"},
      "plan_split_check");
  CHECK(meets(whole) == doc["split_check"]["meets"].get<bool>());
  CHECK(whole["latency_ms"]["ttft"]["p99"].get<double>() ==
        Approx(doc["split_check"]["metrics"]["ttft_p99_ms"].get<double>()));
  const bool split_cheaper = best["objective"].get<double>() < one["objective"].get<double>();
  CHECK(doc["pick"] == (split_cheaper && meets(whole) ? "split" : "one_pool"));
}

TEST_CASE("plan --split refuses bounds on totals, --vary and unordered thresholds",
          "[tools][plan]") {
  const auto dir = fresh_dir("plan_split_refuse");
  auto args = split_case(dir, "512");
  args.insert(args.end(), {"--slo", "output_tok_s>=100"});
  auto r = run_plan(args);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("output_tok_s") && Catch::Contains("total"));
  args = split_case(dir, "512");
  args.insert(args.end(), {"--vary", "scheduler.chunk_size=256,512"});
  r = run_plan(args);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--vary"));
  r = run_plan(split_case(dir, "1024,512"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("increasing"));
}

}  // namespace servesim::test
