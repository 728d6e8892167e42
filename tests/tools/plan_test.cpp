// `plan` end to end: its pick is the brute-force answer (every fleet run with simulate), the
// monotone search agrees with the exhaustive one on fewer runs, an SLO nothing meets names the
// closest fleet and what it misses by, and prices and flags that are wrong are errors.
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPlanSmall = "tests/tools/configs/plan_small.yaml";

// The GPUs, TP degrees and prices of the small case (USD per GPU-hour, given by flag).
const std::map<std::string, double> kPrice = {{"a100-80gb", 2.0}, {"h100-sxm", 5.0}};
constexpr int kMaxGpus = 4;

std::vector<std::string> small_case(const fs::path& out, const std::string& slo,
                                    const std::string& tps = "1,2") {
  return {kPlanSmall,
          "--gpus",
          "a100-80gb,h100-sxm",
          "--tp",
          tps,
          "--max-gpus",
          std::to_string(kMaxGpus),
          "--slo",
          slo,
          "--prices",
          "none",
          "--price",
          "a100-80gb=2",
          "--price",
          "h100-sxm=5",
          "--no-plots",
          "--out",
          out.string()};
}

std::string fmt_slo(double bound) {
  return "ttft_p99_ms=" + std::to_string(static_cast<int>(bound));
}

nlohmann::json plan_ok(const std::string& name, std::vector<std::string> args) {
  const auto dir = fresh_dir(name);
  args.insert(args.end(), {"--out", dir.string()});
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_json(dir / "plan.json");
}

// p99 TTFT (ms) of every fleet of the small case, each run on its own with simulate.
using Fleet = std::tuple<std::string, int, int>;  // gpu, tp, replicas
std::map<Fleet, double> brute_force_ttft_p99() {
  std::map<Fleet, double> out;
  for (const auto& [gpu, price] : kPrice) {
    for (const int tp : {1, 2}) {
      for (int n = 1; n * tp <= kMaxGpus; ++n) {
        const auto dir = fresh_dir("plan_brute");
        const auto r = run_simulate({kPlanSmall, "--set", "replicas.0.gpu=" + gpu, "--set",
                                     "replicas.0.tp=" + std::to_string(tp), "--set",
                                     "replicas.0.count=" + std::to_string(n), "--out", dir.string(),
                                     "--quiet"});
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        out[{gpu, tp, n}] =
            read_json(dir / "summary.json")["latency_ms"]["ttft"]["p99"].get<double>();
      }
    }
  }
  return out;
}

// The cheapest fleet whose p99 TTFT is within `bound`, ties to fewer GPUs then the earlier
// (gpu, tp, count) — the planner's rule.
std::optional<Fleet> cheapest(const std::map<Fleet, double>& ttft, double bound) {
  std::optional<Fleet> best;
  double best_cost = 0;
  int best_gpus = 0;
  for (const auto& [fleet, v] : ttft) {
    if (v > bound) continue;
    const auto& [gpu, tp, n] = fleet;
    const double cost = kPrice.at(gpu) * tp * n;
    if (!best || cost < best_cost || (cost == best_cost && tp * n < best_gpus)) {
      best = fleet;
      best_cost = cost;
      best_gpus = tp * n;
    }
  }
  return best;
}

}  // namespace

TEST_CASE("plan picks what a brute-force search of the same fleets picks", "[plan]") {
  const auto ttft = brute_force_ttft_p99();
  REQUIRE(ttft.size() == 12);  // per GPU: TP1 × 1…4, TP2 × 1…2
  // Three bounds whose answers differ: the search must not pass by luck on one.
  std::set<Fleet> picks;
  for (const double bound : {500.0, 200.0, 100.0}) {
    const std::string slo = fmt_slo(bound);
    INFO(slo);
    const auto expected = cheapest(ttft, bound);
    REQUIRE(expected);
    picks.insert(*expected);
    const auto dir = fresh_dir("plan_pick");
    const auto r = run_plan(small_case(dir, slo));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto plan = read_json(dir / "plan.json");
    const auto& pick = plan["pick"];
    REQUIRE(pick.is_object());
    CHECK(pick["gpu"] == std::get<0>(*expected));
    CHECK(pick["tp"] == std::get<1>(*expected));
    CHECK(pick["replicas"] == std::get<2>(*expected));
    CHECK(pick["usd_per_hour"].get<double>() ==
          Approx(kPrice.at(std::get<0>(*expected)) * std::get<1>(*expected) *
                 std::get<2>(*expected)));
    // Every fleet plan simulated has simulate's number, and its verdict follows from it.
    for (const auto& c : plan["candidates"]) {
      for (const auto& p : c["points"]) {
        const Fleet f{p["gpu"], p["tp"], p["replicas"]};
        CHECK(p["metrics"]["ttft_p99_ms"].get<double>() == ttft.at(f));
        CHECK(p["meets"].get<bool>() == (ttft.at(f) <= bound));
      }
    }
    // Each cheaper alternative is shown failing at a fleet that does fail.
    for (const auto& a : plan["alternatives"]) {
      if (a["kind"] != "cheaper") continue;
      const auto& f = a["fails_at"];
      CHECK_FALSE(f["meets"].get<bool>());
      CHECK(a["why"].get<std::string>().find("ttft_p99_ms") != std::string::npos);
    }
  }
  CHECK(picks.size() >= 2);
  // On a wider space the search prunes: H100 TP1 × 1…16 takes doubling then bisection (1, 2,
  // 4, 3), not 16 runs, and finds brute force's least count.
  const auto dir = fresh_dir("plan_prune");
  auto args = small_case(dir, "ttft_p99_ms=200", "1");
  args[2] = "h100-sxm";
  args[6] = "16";
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto plan = read_json(dir / "plan.json");
  CHECK(plan["fleets_simulated"] == 4);
  CHECK(plan["pick"]["replicas"] == std::get<2>(*cheapest(
                                        [&] {
                                          std::map<Fleet, double> h100;
                                          for (const auto& [f, v] : ttft) {
                                            if (std::get<0>(f) == "h100-sxm" && std::get<1>(f) == 1)
                                              h100[f] = v;
                                          }
                                          return h100;
                                        }(),
                                        200)));
}

TEST_CASE(
    "plan --exhaustive simulates every fleet, agrees with the search and checks "
    "monotonicity",
    "[plan]") {
  const auto dir = fresh_dir("plan_exhaustive");
  auto args = small_case(dir, "ttft_p99_ms=200");
  args.push_back("--exhaustive");
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto full = read_json(dir / "plan.json");
  CHECK(full["fleets_simulated"] == 12);
  for (const auto& c : full["candidates"]) CHECK(c.contains("monotone"));
  const auto searched = plan_ok("plan_searched", [] {
    auto a = small_case("unused", "ttft_p99_ms=200");
    a.resize(a.size() - 2);  // drop --out: plan_ok adds its own
    return a;
  }());
  CHECK(searched["pick"]["gpu"] == full["pick"]["gpu"]);
  CHECK(searched["pick"]["tp"] == full["pick"]["tp"]);
  CHECK(searched["pick"]["replicas"] == full["pick"]["replicas"]);
  // points.csv has one row per fleet simulated.
  CHECK(CsvTable(dir / "points.csv").rows().size() == 12);
}

TEST_CASE("plan with an SLO nothing meets names the closest fleet and what it misses by",
          "[plan]") {
  const auto dir = fresh_dir("plan_infeasible");
  const auto r = run_plan(small_case(dir, "ttft_p99_ms=1"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("pick       none: no fleet of up to 4 GPUs meets every bound") !=
        std::string::npos);
  const auto plan = read_json(dir / "plan.json");
  CHECK(plan["pick"].is_null());
  const auto& closest = plan["closest"];
  REQUIRE(closest.is_object());
  // The closest is the fleet of least p99 TTFT among those simulated.
  double least = 1e300;
  for (const auto& c : plan["candidates"]) {
    for (const auto& p : c["points"]) {
      least = std::min(least, p["metrics"]["ttft_p99_ms"].get<double>());
    }
  }
  CHECK(closest["metrics"]["ttft_p99_ms"].get<double>() == least);
  CHECK(closest["misses"].get<std::string>().rfind("ttft_p99_ms ", 0) == 0);
  CHECK(r.output.find("closest  ") != std::string::npos);
}

TEST_CASE("plan --vary searches settings with each fleet", "[plan]") {
  const auto dir = fresh_dir("plan_vary");
  auto args = small_case(dir, "ttft_p99_ms=500", "1");
  args.insert(args.end(), {"--vary", "scheduler.chunk_size=256,1024"});
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto plan = read_json(dir / "plan.json");
  REQUIRE(plan["candidates"].size() == 4);  // 2 GPUs × TP1 × 2 chunk budgets
  CHECK(plan["candidates"][1]["label"] == "a100-80gb TP1 (scheduler.chunk_size=1024)");
  CHECK(plan["candidates"][1]["setting"]["scheduler.chunk_size"] == 1024);
  const auto csv = CsvTable(dir / "points.csv");
  CHECK(csv.header()[2] == "scheduler.chunk_size");
}

TEST_CASE("plan lists the fleets that cannot run and why, and refuses a config none can run",
          "[plan]") {
  const auto dir = fresh_dir("plan_cannot");
  auto args = small_case(dir, "ttft_p99_ms=500", "1,3,4");
  args[6] = "8";  // --max-gpus
  args.insert(args.end(), {"--set", "model=meta-llama/Llama-2-70b-hf"});
  const auto r = run_plan(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto plan = read_json(dir / "plan.json");
  REQUIRE(plan["candidates"].size() == 6);
  for (const auto& c : plan["candidates"]) {
    INFO(c["label"]);
    if (c["tp"] == 1) {
      CHECK(c["cannot_run"].get<std::string>().find("does not fit on 1 ×") != std::string::npos);
    } else if (c["tp"] == 3) {
      CHECK(c["cannot_run"].get<std::string>().find("does not divide the 64 attention heads") !=
            std::string::npos);
    } else {
      CHECK_FALSE(c.contains("cannot_run"));
      CHECK(c["points"].size() > 0);
    }
  }
  int cannot = 0;
  for (const auto& a : plan["alternatives"]) cannot += a["kind"] == "cannot run";
  CHECK(cannot == 4);
  // A config no fleet can run is the config's error: exit 1, its message, nothing written.
  const auto bad = fresh_dir("plan_cannot_any");
  auto none = small_case(bad, "ttft_p99_ms=500", "1");
  none.insert(none.end(), {"--set", "scheduler.chunk_size=1"});
  const auto rb = run_plan(none);
  CHECK(rb.exit_code == 1);
  CHECK(rb.output.find("chunk_size (1) must be ≥ max_num_seqs") != std::string::npos);
  CHECK_FALSE(fs::exists(bad / "plan.json"));
}

TEST_CASE("plan refuses bad prices and flags, naming what was expected", "[plan][errors]") {
  const auto dir = fresh_dir("plan_errors");
  const auto expect_error = [&](std::vector<std::string> args, const std::string& message) {
    const auto r = run_plan(args);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find(message) != std::string::npos);
  };
  // A GPU without a price, under the cost objective.
  expect_error(
      {kPlanSmall, "--gpus", "a100-80gb,a40", "--slo", "ttft_p99_ms=500", "--out", dir.string()},
      "--gpus a40: no price for a40");
  expect_error({kPlanSmall, "--gpus", "a100-80gb", "--slo", "ttft_p99_ms=500", "--price",
                "a100-80gb=cheap", "--out", dir.string()},
               "--price a100-80gb=cheap: expected GPU=USD_PER_HOUR with a price > 0");
  expect_error({kPlanSmall, "--gpus", "a100-80gb", "--slo", "ttft_p99_ms=500", "--price",
                "a100-80gb=-1", "--out", dir.string()},
               "expected GPU=USD_PER_HOUR with a price > 0");
  expect_error({kPlanSmall, "--gpus", "h1OO", "--slo", "ttft_p99_ms=500", "--out", dir.string()},
               "h1OO");
  expect_error(
      {kPlanSmall, "--gpus", "a100-80gb,a100", "--slo", "ttft_p99_ms=500", "--out", dir.string()},
      "--gpus: a100-80gb is named twice");
  expect_error({kPlanSmall, "--gpus", "a100-80gb", "--tp", "1,2,1", "--slo", "ttft_p99_ms=500",
                "--out", dir.string()},
               "--tp: 1 is named twice");
  expect_error(
      {kPlanSmall, "--gpus", "a100-80gb", "--slo", "ttft_p99_ms=500,200", "--out", dir.string()},
      "plan takes one value per bound");
  expect_error(
      {kPlanSmall, "--gpus", "a100-80gb", "--slo", "no_such_metric=5", "--out", dir.string()},
      "no_such_metric");
  // A price file whose GPU is unknown names its file and line.
  const fs::path prices = dir / "prices.yaml";
  {
    std::ofstream f(prices);
    f << "source: test\ncurrency: USD\nusd_per_gpu_hour:\n  a100-80gb: 2\n  h9000: 1\n";
  }
  expect_error({kPlanSmall, "--gpus", "a100-80gb", "--slo", "ttft_p99_ms=500", "--prices",
                prices.string(), "--out", dir.string()},
               prices.string() + ":5");
  {
    std::ofstream f(prices);
    f << "source: test\ncurrency: EUR\nusd_per_gpu_hour: {a100-80gb: 2}\n";
  }
  expect_error({kPlanSmall, "--gpus", "a100-80gb", "--slo", "ttft_p99_ms=500", "--prices",
                prices.string(), "--out", dir.string()},
               "expected USD");
  // Nothing ran: no plan.json was written by any of these.
  CHECK_FALSE(fs::exists(dir / "plan.json"));
}

}  // namespace servesim::test
