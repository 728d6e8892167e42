// `plan --layouts` end to end: every deployment of a small MoE model within a budget simulated,
// the frontier and each pick checked by brute force over what it wrote, and bad flags refused.
#include <cmath>
#include <set>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;

TEST_CASE("plan --layouts reports the frontier and the best deployment at each speed",
          "[plan][layouts]") {
  const auto dir = fresh_dir("plan_layouts");
  const auto r = run_plan({"--layouts", "deepseek-ai/DeepSeek-V2-Lite", "--system", "h100_sxm",
                           "--engines", "sglang", "--formats", "bf16", "--max-gpus", "2", "--isl",
                           "256", "--osl", "32", "--speeds", "20,100,1000", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("frontier") != std::string::npos);
  CHECK(fs::exists(dir / "points.csv"));
  CHECK(fs::file_size(dir / "layouts.png") > 10000);  // tools/plot.py layouts drew it
  const nlohmann::json doc = read_json(dir / "layouts.json");
  const auto& cands = doc["candidates"];
  // TP1, TP2, TEP2, DEP2 aggregated, and one TP1 prefill with one TP1 decode server.
  std::set<std::string> layouts;
  std::size_t simulated = 0;
  std::size_t pruned = 0;
  for (const auto& c : cands) {
    const std::string label = c["label"];
    layouts.insert(label.substr(0, label.rfind(" c")));
    CHECK(c["gpus"].get<std::int64_t>() <= 2);
    CHECK_FALSE(c.contains("not_run"));
    if (c.value("pruned", false)) {
      ++pruned;
      continue;
    }
    ++simulated;
    // The point from its TTFT and TPOT: mean output (⌊0.8 × 32⌋ + 32) / 2 = 28.5 tokens.
    const double ttft = c["ttft_ms"], tpot = c["tpot_ms"];
    const double per_gpu = c["concurrency"].get<double>() * 28.5 / ((ttft + 27.5 * tpot) / 1000) /
                           c["gpus"].get<double>();
    CHECK(c["tokens_per_s_per_gpu"].get<double>() == Approx(per_gpu));
    CHECK(c["tokens_per_s_per_user"].get<double>() == Approx(1000 / tpot));
    // Its trust band, from data/measured/silicon_bands.yaml's SGLang MoE regimes: ordered ranges.
    REQUIRE(c["band"].is_object());
    for (const char* key :
         {"tokens_per_s_per_user", "tokens_per_s_per_gpu", "ttft_ms", "tpot_ms"}) {
      CHECK(c["band"][key][0].get<double>() < c["band"][key][1].get<double>());
    }
  }
  CHECK(doc["bands"]["source"].get<std::string>().ends_with("data/measured/silicon_bands.yaml"));
  CHECK(layouts == std::set<std::string>{"agg sglang bf16 TP1", "agg sglang bf16 TP2",
                                         "agg sglang bf16 TEP2", "agg sglang bf16 DEP2",
                                         "disagg sglang bf16 prefill TP1 ×1 + decode TP1 ×1"});
  CHECK(doc["runs"].get<std::size_t>() == simulated);
  CHECK(doc["pruned"].get<std::size_t>() == pruned);
  CHECK(simulated + pruned == cands.size());
  // The frontier: no simulated deployment beats one of its points on both axes, and every other
  // simulated deployment is beaten (or equalled) by one of them.
  const auto point = [&](std::size_t i) {
    return std::pair{cands[i]["tokens_per_s_per_user"].get<double>(),
                     cands[i]["tokens_per_s_per_gpu"].get<double>()};
  };
  std::set<std::size_t> front;
  for (const auto& i : doc["frontier"]) front.insert(i.get<std::size_t>());
  REQUIRE_FALSE(front.empty());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].value("pruned", false)) continue;
    const auto [u, g] = point(i);
    bool beaten = false;
    for (std::size_t j = 0; j < cands.size(); ++j) {
      if (j == i || cands[j].value("pruned", false)) continue;
      const auto [uj, gj] = point(j);
      if (uj >= u && gj >= g && (uj > u || gj > g)) beaten = true;
    }
    INFO(cands[i]["label"]);
    CHECK(beaten == (front.count(i) == 0));
  }
  // Each pick: the most tokens/s per GPU at the speed, by brute force; none at 1000 tokens/s.
  for (const auto& p : doc["picks"]) {
    const double speed = p["min_tokens_per_s_per_user"];
    double best = -1;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      if (cands[i].value("pruned", false)) continue;
      if (point(i).first >= speed) best = std::max(best, point(i).second);
    }
    INFO(speed);
    if (best < 0) {
      CHECK(p["candidate"].is_null());
    } else {
      REQUIRE_FALSE(p["candidate"].is_null());
      CHECK(point(p["candidate"].get<std::size_t>()).second == best);
    }
  }
  CHECK(doc["picks"][2]["candidate"].is_null());
}

TEST_CASE("plan --layouts refuses a bad system, engine, format or mix of modes",
          "[plan][layouts][errors]") {
  const auto dir = fresh_dir("plan_layouts_errors");
  const auto expect_error = [&](std::vector<std::string> args, const std::string& message) {
    args.insert(args.end(), {"--out", dir.string(), "--no-plots"});
    const auto r = run_plan(args);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find(message) != std::string::npos);
  };
  const std::string model = "deepseek-ai/DeepSeek-V2-Lite";
  expect_error({"--layouts", model, "--system", "h900"}, "--system: unknown system 'h900'");
  expect_error({"--layouts", model}, "--layouts needs --system");
  expect_error({"--layouts", model, "--system", "h100_sxm", "--engines", "tgi"},
               "--engines: unknown engine 'tgi'");
  expect_error({"--layouts", model, "--system", "h100_sxm", "--formats", "fp6"},
               "unknown weight format 'fp6'");
  expect_error({"--layouts", "nobody/NoSuchModel", "--system", "h100_sxm"},
               "model nobody/NoSuchModel is not in the catalog");
  expect_error({"--layouts", model, "--system", "h100_sxm", "--formats", "nvfp4"}, "nvfp4");
  // A model no layout within the budget holds: each layout tried, with its reason.
  expect_error({"--layouts", "deepseek-ai/DeepSeek-R1", "--system", "h100_sxm", "--engines",
                "sglang", "--max-gpus", "4"},
               "no deployment of deepseek-ai/DeepSeek-R1 on h100_sxm within 4 GPUs:\n  sglang fp8 "
               "TP1: memory");
  // Without --layouts, plan still needs its config, GPUs and SLOs.
  expect_error({"--gpus", "h100-sxm"}, "plan needs CONFIG, --gpus and --slo");
  CHECK_FALSE(fs::exists(dir / "layouts.json"));
}

}  // namespace servesim::test
