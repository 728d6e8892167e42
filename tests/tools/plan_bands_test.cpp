// `plan --bands`: the pick and the fleets cheaper than it rerun under the error model's band
// draws; a pick with a clear margin holds in every draw while the cheaper fleet misses in every
// one, the counts are the same bytes for a seed, a GPU without validation data is "unmeasured"
// with no count, and a --band-draws outside 3–50 is a usage error. The runs use
// tests/tools/configs/bands.yaml (analytical, A100: every regime measured).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPlanBandsConfig = "tests/tools/configs/bands.yaml";

// At 60 req/s two A100s miss TTFT p99 ≤ 1 s by more than 2× and three meet it with a 3× margin,
// so the pick (3) and the one cheaper fleet (2) keep their verdicts in every draw.
std::vector<std::string> margin_case(const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {kPlanBandsConfig,
                                   "--set",
                                   "workload.arrival.qps=60",
                                   "--gpus",
                                   "a100-80gb",
                                   "--tp",
                                   "1",
                                   "--max-gpus",
                                   "8",
                                   "--slo",
                                   "ttft_p99_ms=1000",
                                   "--objective",
                                   "gpus",
                                   "--no-plots",
                                   "--out",
                                   out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string plan_file_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a plan pick with a clear margin holds in every band draw", "[plan][bands]") {
  const auto dir = fresh_dir("plan_bands_margin");
  const auto r = run_plan(margin_case(dir, {"--bands"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto plan = read_json(dir / "plan.json");
  const auto& b = plan["bands"];
  REQUIRE(b["status"] == "measured");
  CHECK(b["draws"] == 5);
  CHECK(b["pick"]["replicas"] == plan["pick"]["replicas"]);
  CHECK(b["pick"]["meets_in"] == 5);
  // The one cheaper fleet: one replica fewer than the pick, which misses in every draw.
  REQUIRE(b["cheaper"].size() == 1);
  CHECK(b["cheaper"][0]["replicas"] == plan["pick"]["replicas"].get<int>() - 1);
  CHECK(b["cheaper"][0]["status"] == "measured");
  CHECK(b["cheaper"][0]["meets_in"] == 0);
  CHECK(b["near_tie"] == false);
  CHECK_THAT(r.output, Catch::Contains("meets in 5 of 5 draws"));
  CHECK_THAT(r.output, Catch::Contains("would meet in 0 of 5 draws"));
}

TEST_CASE("a plan pick at the edge of its SLO is flagged a near tie", "[plan][bands]") {
  // Three A100s at 60 req/s have a TTFT p99 just under 300 ms: some draws push it over.
  const auto dir = fresh_dir("plan_bands_edge");
  auto args = margin_case(dir, {"--bands"});
  args[10] = "ttft_p99_ms=300";
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto plan = read_json(dir / "plan.json");
  const auto& b = plan["bands"];
  REQUIRE(b["status"] == "measured");
  CHECK(plan["pick"]["replicas"] == 3);
  const int met = b["pick"]["meets_in"].get<int>();
  CHECK(met > 0);
  CHECK(met < 5);
  int per_draw = 0;
  for (const auto& d : b["pick"]["per_draw"]) per_draw += d.get<bool>() ? 1 : 0;
  CHECK(per_draw == met);
  CHECK(b["near_tie"] == true);
  CHECK_THAT(r.output, Catch::Contains("near tie the pick misses in " + std::to_string(5 - met)));
}

TEST_CASE("plan --bands is the same bytes for a seed and leaves the search as it was",
          "[plan][bands]") {
  const auto a = fresh_dir("plan_bands_same_a");
  const auto b = fresh_dir("plan_bands_same_b");
  const auto plain = fresh_dir("plan_bands_same_plain");
  for (const auto& [dir, extra] : std::vector<std::pair<fs::path, std::vector<std::string>>>{
           {a, {"--bands", "--band-draws", "7", "--threads", "1"}},
           {b, {"--bands", "--band-draws", "7", "--threads", "2"}},
           {plain, {}}}) {
    const auto r = run_plan(margin_case(dir, extra));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  auto ja = read_json(a / "plan.json");
  auto jb = read_json(b / "plan.json");
  auto jp = read_json(plain / "plan.json");
  REQUIRE(ja["bands"]["draws"] == 7);
  CHECK(ja["bands"].dump() == jb["bands"].dump());
  CHECK(plan_file_text(a / "points.csv") == plan_file_text(plain / "points.csv"));
  for (auto* j : {&ja, &jb, &jp}) {
    j->erase("bands");
    j->erase("wall_s");
  }
  CHECK(ja.dump() == jp.dump());
  CHECK(jb.dump() == jp.dump());
  CHECK_FALSE(read_json(plain / "plan.json").contains("bands"));
}

TEST_CASE("a plan on a GPU without validation data says unmeasured, never a count",
          "[plan][bands]") {
  const auto dir = fresh_dir("plan_bands_unmeasured");
  auto args = margin_case(dir, {"--bands"});
  args[4] = "b200";
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto b = read_json(dir / "plan.json")["bands"];
  CHECK(b["status"] == "unmeasured");
  CHECK(b["pick"]["meets_in"].is_null());
  CHECK_FALSE(b["pick"].contains("per_draw"));
  CHECK(b["near_tie"].is_null());
  REQUIRE(b["pick"]["unmeasured"].size() == 3);
  CHECK(b["pick"]["unmeasured"][0] == "analytical/datasheet/prefill (b200)");
  CHECK_THAT(r.output, Catch::Contains(": unmeasured (no validation data for "
                                       "analytical/datasheet/prefill (b200)"));
  CHECK(r.output.find(" of 5 draws") == std::string::npos);
}

TEST_CASE("plan --band-draws outside 3–50 and a bad error model are errors",
          "[plan][bands][errors]") {
  for (const std::string n : {"2", "51", "x"}) {
    const auto dir = fresh_dir("plan_bands_bad_draws");
    const auto r = run_plan(margin_case(dir, {"--bands", "--band-draws", n}));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--band-draws"));
    CHECK_FALSE(fs::exists(dir / "plan.json"));
  }
  const auto dir = fresh_dir("plan_bands_bad_model");
  const auto r = run_plan(
      margin_case(dir, {"--error-model", "tests/tools/bad/error_model_bad_quantiles.yaml"}));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("tests/tools/bad/error_model_bad_quantiles.yaml:5:") &&
                           Catch::Contains("expected p10 ≤ p50 ≤ p90"));
  CHECK_FALSE(fs::exists(dir / "plan.json"));
}

}  // namespace servesim::test
