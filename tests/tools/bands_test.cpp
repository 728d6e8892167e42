// `simulate --bands`: the band holds the point estimate, is the same bytes for a seed, says
// "unmeasured" where the error model has no data, and a bad error-model file is an error naming
// file:line:col. The runs use tests/tools/configs/bands.yaml (analytical, home GPU).
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

constexpr const char* kBands = "tests/tools/configs/bands.yaml";

nlohmann::json bands_summary(const std::string& name, std::vector<std::string> extra) {
  const auto dir = fresh_dir(name);
  std::vector<std::string> args = {kBands, "--bands", "--out", dir.string(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_simulate(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_json(dir / "summary.json");
}

// Every {value, low, high} leaf under `j`.
void collect_bands(const nlohmann::json& j, std::vector<nlohmann::json>& out) {
  if (!j.is_object()) return;
  if (j.contains("value") && j.contains("low") && j.contains("high")) {
    out.push_back(j);
    return;
  }
  for (const auto& [k, v] : j.items()) collect_bands(v, out);
}

}  // namespace

TEST_CASE("every band holds its point estimate, which is the run without --bands", "[bands]") {
  const auto s = bands_summary("bands_contains", {});
  const auto& b = s["bands"];
  REQUIRE(b["status"] == "measured");
  CHECK(b["draws"] == 5);
  std::vector<nlohmann::json> leaves;
  collect_bands(b, leaves);
  CHECK(leaves.size() >= 14);
  bool any_width = false;
  for (const auto& x : leaves) {
    INFO(x.dump());
    CHECK(x["low"].get<double>() <= x["value"].get<double>());
    CHECK(x["value"].get<double>() <= x["high"].get<double>());
    any_width = any_width || x["high"].get<double>() > x["low"].get<double>();
  }
  CHECK(any_width);
  CHECK(b["latency_ms"]["tbt"]["p50"]["value"] == s["latency_ms"]["tbt"]["p50"]);
  CHECK(b["throughput"]["output_tokens_per_s"]["value"] == s["throughput"]["output_tokens_per_s"]);
  // The home GPU's three regimes, each with the p10 factor below the p90 one.
  REQUIRE(b["regimes"].size() == 3);
  for (const auto& r : b["regimes"]) {
    CHECK(r["regime"].get<std::string>().rfind("analytical/home/", 0) == 0);
    CHECK(r["factor_p10"].get<double>() < r["factor_p90"].get<double>());
  }
  // Draws 0 and 2 are every kind at its 10th and 90th percentile.
  CHECK(b["levels"][0]["prefill"].get<double>() == Approx(0.1));
  CHECK(b["levels"][2]["decode_high"].get<double>() == Approx(0.9));
}

TEST_CASE("bands are the same bytes for a seed and move with it", "[bands]") {
  const auto a = bands_summary("bands_det_a", {"--band-draws", "7"});
  const auto b = bands_summary("bands_det_b", {"--band-draws", "7"});
  CHECK(a["bands"].dump() == b["bands"].dump());
  const auto c = bands_summary("bands_det_c", {"--band-draws", "7", "--seed", "12"});
  CHECK(a["bands"]["levels"][3].dump() != c["bands"]["levels"][3].dump());
}

TEST_CASE("a GPU with no validation data has an unmeasured band, never a number", "[bands]") {
  const auto s = bands_summary("bands_unmeasured", {"--set", "replicas.0.gpu=b200"});
  const auto& b = s["bands"];
  CHECK(b["status"] == "unmeasured");
  CHECK(!b.contains("latency_ms"));
  REQUIRE(b["unmeasured"].size() == 3);
  CHECK(b["unmeasured"][0] == "analytical/datasheet/prefill (b200)");
  const auto dir = fresh_dir("bands_unmeasured_table");
  const auto r =
      run_simulate({kBands, "--bands", "--set", "replicas.0.gpu=b200", "--out", dir.string()});
  CHECK_THAT(r.output, Catch::Contains("bands      unmeasured: no validation data for "
                                       "analytical/datasheet/prefill (b200)"));
}

TEST_CASE("a cost model the error model does not cover is unmeasured", "[bands]") {
  const auto s = bands_summary("bands_roofline", {"--set", "cost_model.kind=roofline"});
  CHECK(s["bands"]["status"] == "unmeasured");
}

TEST_CASE("a bad error-model file is an error naming file, line and column", "[bands][errors]") {
  const auto dir = fresh_dir("bands_bad");
  auto r = run_simulate({kBands, "--error-model", "tests/tools/bad/error_model_bad_quantiles.yaml",
                         "--out", dir.string(), "-q"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("tests/tools/bad/error_model_bad_quantiles.yaml:5:") &&
                           Catch::Contains("expected p10 ≤ p50 ≤ p90"));
  r = run_simulate({kBands, "--error-model", "tests/tools/bad/error_model_unknown_kind.yaml",
                    "--out", dir.string(), "-q"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("tests/tools/bad/error_model_unknown_kind.yaml:5:") &&
                           Catch::Contains("unknown step kind 'decode_huge' (known: prefill, "
                                           "decode_low, decode_high)"));
  r = run_simulate(
      {kBands, "--error-model", "tests/tools/bad/no_such_file.yaml", "--out", dir.string(), "-q"});
  CHECK(r.exit_code == 1);
}

TEST_CASE("a near-capacity run warns and names its gain but a light one does not", "[bands]") {
  // At 2 req/s the A100 run is light; at 18 req/s it sits past capacity (13.9 req/s served),
  // where queues amplify a step-time error several times over.
  auto gains = [](const std::string& name, const std::string& qps) {
    const auto dir = fresh_dir(name);
    const auto r = run_simulate({kBands, "--sensitivity", "2", "--set",
                                 "workload.arrival.qps=" + qps, "--out", dir.string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(read_json(dir / "summary.json")["sensitivity"], r.output);
  };
  const auto [light, light_out] = gains("bands_warn_light", "2");
  CHECK(light["gain"]["ttft"]["p99"].get<double>() < 3);
  CHECK(!light.contains("warning"));
  CHECK_THAT(light_out, !Catch::Contains("near capacity"));
  const auto [busy, busy_out] = gains("bands_warn_busy", "18");
  REQUIRE(busy.contains("warning"));
  const auto& w = busy["warning"];
  CHECK(w["gain"].get<double>() >= 3);
  CHECK(w["threshold"] == 3);
  const std::string metric = w["metric"].get<std::string>();
  const auto space = metric.find(' ');
  CHECK(w["gain"] == busy["gain"][metric.substr(0, space)][metric.substr(space + 1)]);
  CHECK_THAT(busy_out, Catch::Contains("warning    near capacity: " + metric + " moves"));
}

TEST_CASE("a sweep pick with a clear margin holds in every band draw", "[bands][sweep]") {
  // qps 1 meets TTFT p99 ≤ 2 s with a wide margin at half of one A100's capacity; 40 req/s is
  // far over capacity in every draw; so max:qps picks 1 whatever the draw.
  const auto dir = fresh_dir("bands_sweep_margin");
  const auto r = run_sweep({kBands, "--vary", "workload.arrival.qps=0.5,1,40", "--slo",
                            "ttft_p99_ms=2000", "--pick", "max:workload.arrival.qps", "--bands",
                            "--out", dir.string(), "--no-plots"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto sel = read_json(dir / "selection.json");
  const auto& b = sel["bands"];
  REQUIRE(b["status"] == "measured");
  CHECK(b["draws"] == 5);
  REQUIRE(b["settings"].size() == 1);
  CHECK(b["settings"][0]["pick"] == "workload.arrival.qps=1");
  CHECK(b["settings"][0]["holds"] == 5);
  CHECK(b["settings"][0]["others"].empty());
  CHECK_THAT(r.output, Catch::Contains("bands      ttft_p99_ms <= 2000: pick "
                                       "workload.arrival.qps=1 holds in 5 of 5 draws"));
}

TEST_CASE("the latency CDFs and the sweep frontier draw the bands", "[bands][plot]") {
  const auto run = fresh_dir("bands_plot_run");
  auto r = run_simulate({kBands, "--bands", "--plot", "--out", run.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, !Catch::Contains("note:"));
  CHECK(std::filesystem::file_size(run / "latency.png") > 1000);
  const auto sweep = fresh_dir("bands_plot_sweep");
  r = run_sweep({kBands, "--vary", "workload.arrival.qps=1,2", "--slo", "tbt_p99_ms=100", "--pick",
                 "max:workload.arrival.qps", "--bands", "--out", sweep.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::file_size(sweep / "frontier.png") > 1000);
  const auto ranges = read_json(sweep / "selection.json")["bands"]["points"];
  REQUIRE(ranges.size() == 2);
  for (const auto& p : ranges) {
    CHECK(p["tbt_p99_ms"]["low"].get<double>() <= p["tbt_p99_ms"]["high"].get<double>());
    CHECK(p["output_tok_s"]["low"].get<double>() < p["output_tok_s"]["high"].get<double>());
  }
}

TEST_CASE("sweep --bands needs --pick", "[bands][sweep]") {
  const auto dir = fresh_dir("bands_sweep_nopick");
  const auto r = run_sweep({kBands, "--vary", "workload.arrival.qps=1,2", "--bands", "--out",
                            dir.string(), "--no-plots"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--bands needs --pick"));
}

}  // namespace servesim::test
