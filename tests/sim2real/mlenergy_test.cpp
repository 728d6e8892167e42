#include "tools/sim2real/mlenergy.hpp"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/steady_state_window.hpp"

using namespace servesim;
using namespace servesim::sim2real;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  return (fs::path(SERVESIM_SOURCE_DIR) / "tests" / "sim2real" / "data" / name).string();
}

// `text` written to a temporary file named `name`; its path.
std::string temp_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "servesim_mlenergy_test";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

// The small fixture's text with `from` replaced by `to` (once).
std::string small_with(const std::string& from, const std::string& to) {
  std::ifstream in(data("mlenergy_small.json"));
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

std::string replay_error(const std::string& path) {
  try {
    replay_energy_rows(read_energy_file(path), {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("sim2real --mlenergy replays a small file and scores every metric",
          "[sim2real][mlenergy]") {
  const auto rows = read_energy_file(data("mlenergy_small.json"));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].max_num_seqs == 8);
  CHECK(rows[0].model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(rows[0].itl_p50_ms == Approx(7.316).epsilon(1e-3));
  const EnergyReplayOptions options;
  const auto results = replay_energy_rows(rows, options);
  const auto doc = energy_report_json(results, options);
  REQUIRE(doc["rows"].size() == 2);
  for (const auto& r : doc["rows"]) {
    CHECK(r["requests"] == 64);  // the histogram counts the run's requests
    CHECK(r["window_s"].get<double>() > 0);
    for (const char* k : {"output_tok_s", "itl_p50", "itl_p90", "power_w", "j_per_token"}) {
      INFO(k);
      CHECK(r["metrics"][k]["sim"].get<double>() > 0);
      CHECK(std::isfinite(r["metrics"][k]["error_pct"].get<double>()));
    }
    // Every seat full through the window: the mean batch is the batch.
    CHECK(r["avg_batch"]["sim"].get<double>() ==
          Approx(r["max_num_seqs"].get<double>()).epsilon(0.02));
  }
  for (const char* k : {"output_tok_s", "itl_p50", "itl_p90", "power_w", "j_per_token"}) {
    CHECK(doc["median"][k].get<double>() >= 0);
  }
  // Deterministic: the same seed gives the same figures.
  const auto again = energy_report_json(replay_energy_rows(rows, options), options);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(again["rows"][i]["metrics"] == doc["rows"][i]["metrics"]);
  CHECK_THAT(energy_report_table(doc), Contains("median |error|"));
  // The generated config replays the row with `simulate` too: it keeps the window.
  CHECK_THAT(results[0].config_yaml, Contains("steady_state: true") &&
                                         Contains("kind: conversation") &&
                                         Contains("sampling: {top_p: true, penalties: true}"));
}

TEST_CASE(
    "sim2real --mlenergy holds Llama-3.1-8B at batch 256 on H100 within its band "
    "(regression guard)",
    "[sim2real][mlenergy]") {
  // The fit set's row at batch 256 (measured: 9,010 tok/s, ITL p50 26.13 ms, 691 W, 0.077 J).
  // Band: what the model gives today (-3.3%, +0.6%, -11.8%, -8.8%) ± 5 points.
  const auto rows = read_energy_file(data("mlenergy_llama8b_bs256.json"));
  REQUIRE(rows.size() == 1);
  const auto r = replay_energy_row(rows[0], {});
  CHECK(signed_error_pct(r.sim.output_tok_s, rows[0].output_tok_s) == Approx(-3.3).margin(5));
  CHECK(signed_error_pct(r.sim.itl_p50_ms, rows[0].itl_p50_ms) == Approx(0.6).margin(5));
  CHECK(signed_error_pct(r.sim.power_w, rows[0].power_w) == Approx(-11.8).margin(5));
  CHECK(signed_error_pct(r.sim.j_per_token, rows[0].j_per_token) == Approx(-8.8).margin(5));
  // Power never passes the board's 700 W cap.
  CHECK(r.sim.power_w <= 700);
  // Later turns find their history in the prefix cache.
  CHECK(r.prefix_hit_rate > 0.3);
}

TEST_CASE("bad ML.ENERGY input names the file and the field", "[sim2real][mlenergy]") {
  CHECK_THAT(
      replay_error(temp_file("missing.json", small_with("\"median_itl_ms\"", "\"median_itl\""))),
      Contains("missing.json: configurations[0]: field 'median_itl_ms': missing"));
  CHECK_THAT(replay_error(temp_file("gpu.json", small_with("\"H100\"", "\"H900\""))),
             Contains("gpu.json: configurations[0]") && Contains("H900"));
  CHECK_THAT(replay_error(temp_file(
                 "model.json", small_with("meta-llama/Llama-3.1-8B-Instruct", "acme/Nothing-1B"))),
             Contains("model.json: configurations[0]") && Contains("acme/Nothing-1B"));
  CHECK_THAT(replay_error(
                 temp_file("zero.json", small_with("\"max_num_seqs\": 8", "\"max_num_seqs\": 0"))),
             Contains("zero.json: configurations[0]: field 'max_num_seqs': expected a value > 0"));
  CHECK_THAT(replay_error(temp_file("task.json", small_with("lm-arena-chat", "poetry"))),
             Contains("task.json: field 'task'") && Contains("poetry"));
  CHECK_THAT(replay_error(temp_file("notjson.json", "{")), Contains("notjson.json: not JSON"));
  CHECK_THAT(replay_error(temp_file("other.json", "{\"a\": 1}")),
             Contains("other.json: neither an ML.ENERGY v3 model file"));
  CHECK_THAT(replay_error(data("no-such-file.json")), Contains("cannot open"));
}

TEST_CASE("an ML.ENERGY v2 configuration file reads as one row", "[sim2real][mlenergy]") {
  const auto path = temp_file(
      "bs64+tp1+pp1.json",
      R"json({"Model": "meta-llama/Meta-Llama-3.1-8B-Instruct", "GPU": "NVIDIA H100 80GB HBM3",
          "TP": 1, "PP": 1, "Energy/req (J)": 82.6, "Avg TPOT (s)": 0.035,
          "Token tput (tok/s)": 1784.7, "Avg Output Tokens": 482.8, "Avg BS (reqs)": 63.9,
          "Max BS (reqs)": 64})json");
  const auto rows = read_energy_file(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].source == "v2");
  CHECK(rows[0].max_num_seqs == 64);
  CHECK(rows[0].itl_p50_ms == Approx(35));
  CHECK(rows[0].j_per_token == Approx(82.6 / 482.8));
  CHECK(rows[0].power_w == Approx(82.6 / 482.8 * 1784.7));
  CHECK(rows[0].output.mean() == Approx(482.8).epsilon(0.1));
  CHECK_THAT(energy_config_yaml(rows[0], {}), Contains("meta-llama/Llama-3.1-8B-Instruct"));
}

TEST_CASE("a run's energy is its steps' energy plus idle power between them",
          "[sim2real][mlenergy][power]") {
  // A light load on one H100 leaves gaps between steps: the summary's energy must be the steps'
  // own energy plus the idle draw through the gaps, nothing lost or counted twice.
  const std::string yaml =
      "name: energy\nseed: 3\nmodel: meta-llama/Llama-3.1-8B-Instruct\n"
      "replicas: [{gpu: h100-sxm, tp: 1, count: 1}]\n"
      "scheduler: {kind: sarathi, chunk_size: 512, max_num_seqs: 16}\n"
      "router: {kind: round_robin}\ncost_model: {kind: analytical, engine: vllm-v1}\n"
      "workload:\n  arrival: {kind: poisson, qps: 2}\n"
      "  lengths: {kind: fixed, prompt_tokens: 300, output_tokens: 40}\n  num_requests: 30\n";
  const RunConfig config = RunConfig::parse(ConfigNode::parse(yaml, "energy.yaml"), 3);
  Simulation sim(config);
  struct StepEnergy final : RunObserver {
    void on_step(const StepRecord& s, const BatchShape&, const StepCost&) override {
      joules += s.energy_j;
      busy_ns += static_cast<double>(s.duration_ns);
    }
    double joules = 0;
    double busy_ns = 0;
  } steps;
  MetricsCollector metrics;
  const EngineTotals totals = sim.run({.observers = {&metrics, &steps}});
  const auto summary = metrics.summary(totals, sim.fleet());
  const double idle_w = sim.cost_model().idle_power_w(sim.fleet()[0]->spec);
  REQUIRE(idle_w == 140);
  const double makespan_ns = summary["makespan_s"].get<double>() * 1e9;
  REQUIRE(makespan_ns > 2 * steps.busy_ns);  // a light load: mostly idle
  CHECK(summary["energy_j"].get<double>() ==
        Approx(steps.joules + idle_w * (makespan_ns - steps.busy_ns) / 1e9).epsilon(1e-6));
}
