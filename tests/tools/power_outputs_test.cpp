// What the power model adds to a run's outputs: energy and power per replica and fleet, their
// conservation and caps, and the power-aware router's use of them.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {

TEST_CASE(
    "on a mixed capped fleet power_aware gives the H100s more of the prompts than "
    "least_outstanding, and finishes sooner",
    "[outputs][power][router]") {
  // configs/experiments/power_fleet_mixed.yaml: two H100s at 400 W (replicas 0, 1), two A100s.
  struct Result {
    double h100_share = 0;  // of the prompt tokens
    double e2e_p99 = 0;
    nlohmann::json summary;
  };
  auto run = [](const std::string& router) {
    const auto dir =
        run_ok("mixed_" + router,
               {"configs/experiments/power_fleet_mixed.yaml", "--set", "router.kind=" + router,
                "--set", "workload.num_requests=300", "--set", "workload.arrival.qps=9"});
    const CsvTable requests(dir / "requests.csv");
    double all = 0, h100 = 0;
    for (std::size_t i = 0; i < requests.rows().size(); ++i) {
      const auto tokens = static_cast<double>(requests.integer(i, "prompt_tokens"));
      all += tokens;
      if (requests.integer(i, "replica") < 2) h100 += tokens;
    }
    Result r;
    r.h100_share = h100 / all;
    r.summary = read_json(dir / "summary.json");
    r.e2e_p99 = r.summary["latency_ms"]["e2e"]["p99"].get<double>();
    return r;
  };
  const Result aware = run("power_aware");
  const Result count = run("least_outstanding");
  CHECK(aware.h100_share > count.h100_share + 0.05);  // 74.6% against 63.8% on 1,000 requests
  CHECK(aware.e2e_p99 < count.e2e_p99);
  // Both GPU kinds have power sections: every replica reports energy above its idle draw.
  for (const auto& rep : aware.summary["replicas"]) {
    const double idle = rep["gpu"] == "a100-80gb" ? 65 : 140;
    CHECK(rep["energy_j"].get<double>() > idle * aware.summary["makespan_s"].get<double>());
  }
}

TEST_CASE("on a full H100, more seats cost fewer joules per token at more watts (ML.ENERGY shape)",
          "[outputs][power]") {
  // configs/experiments/mlenergy_h100.yaml: the H100 file's power section prices every step;
  // as ML.ENERGY measured, J/token falls and mean power rises with max_num_seqs, between the idle
  // draw and the TDP.
  auto run = [](int seats) {
    const auto dir = run_ok("mlenergy_" + std::to_string(seats),
                            {"configs/experiments/mlenergy_h100.yaml", "--set",
                             "scheduler.max_num_seqs=" + std::to_string(seats), "--set",
                             "workload.num_requests=" + std::to_string(6 * seats)});
    return read_json(dir / "summary.json");
  };
  const auto small = run(16);
  const auto large = run(128);
  const double j_small = small["energy_j_per_output_token"].get<double>();
  const double j_large = large["energy_j_per_output_token"].get<double>();
  CHECK(j_large < 0.5 * j_small);
  const double w_small = small["power_w"]["mean"].get<double>();
  const double w_large = large["power_w"]["mean"].get<double>();
  CHECK(w_small > 140);  // the file's idle_w
  CHECK(w_large > w_small);
  CHECK(large["power_w"]["peak"].get<double>() <= 700 + 1e-6);
  CHECK(large["replicas"][0]["power_w"]["idle"].get<double>() == 140);
}

TEST_CASE("energy is conserved (steps plus idle power make the total) and power stays under caps",
          "[outputs][power]") {
  // Two RTX 5090s (a power section in their file) capped at 450 W, under the analytical model.
  const auto dir = run_ok(
      "energy", {kSeeded, "--set", "cost_model.kind=analytical", "--set", "replicas.0.gpu=rtx-5090",
                 "--set", "replicas.0.power_cap_w=450", "--set", "model=meta-llama/Llama-3.1-8B",
                 "--set", "scheduler.max_model_len=8192", "--set", "workload.num_requests=60"});
  const auto j = read_json(dir / "summary.json");
  const CsvTable steps(dir / "steps.csv");
  std::vector<double> step_j(2, 0);
  std::vector<long long> busy(2, 0);
  std::vector<double> peak(2, 0);
  for (const auto& row : steps.rows()) {
    const auto r = static_cast<std::size_t>(std::stoi(row.at("replica")));
    const double e = std::stod(row.at("energy_j"));
    const double ns = std::stod(row.at("duration_ns"));
    CHECK(e > 0);
    step_j[r] += e;
    busy[r] += static_cast<long long>(ns);
    peak[r] = std::max(peak[r], e / (ns * 1e-9));
  }
  const double span_ns = j["makespan_s"].get<double>() * 1e9;
  double total = 0;
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& rep = j["replicas"][r];
    const double idle = rep["power_w"]["idle"].get<double>();
    CHECK(idle == 30);  // the 5090 file's idle_w
    const double e = step_j[r] + idle * (span_ns - static_cast<double>(busy[r])) * 1e-9;
    CHECK(rep["energy_j"].get<double>() == Approx(e).epsilon(1e-6));
    CHECK(rep["power_w"]["peak"].get<double>() == Approx(peak[r]).epsilon(1e-9));
    CHECK(rep["power_w"]["peak"].get<double>() <= 450 + 1e-6);
    total += e;
  }
  CHECK(j["energy_j"].get<double>() == Approx(total).epsilon(1e-6));
  CHECK(j["energy_j_per_output_token"].get<double>() ==
        Approx(total / j["requests"]["output_tokens"].get<double>()));
  // The fleet's peak is at most both replicas' peaks together, at least one's plus the other idle.
  const double fleet_peak = j["power_w"]["peak"].get<double>();
  CHECK(fleet_peak <= peak[0] + peak[1] + 1e-6);
  CHECK(fleet_peak >= std::max(peak[0], peak[1]) + 30 - 1e-6);
  CHECK(j["power_w"]["mean"].get<double>() == Approx(total / j["makespan_s"].get<double>()));
}

TEST_CASE("power_aware sends a long prefill to the loose cap, cap_blind sees equal GPUs",
          "[router][power]") {
  // Two RTX 5090s, replica 0 capped at 400 W, replica 1 at its 575 W TDP; 4096-token prompts
  // 1 ms apart. A 4096-token prefill costs about 12% more at 400 W (README "Power caps").
  auto replicas_of = [](const std::string& router) {
    const auto dir = run_ok(
        "router_" + router,
        {kSeeded, "--set", "cost_model.kind=analytical", "--set",
         "replicas=[{gpu: rtx-5090, tp: 1, power_cap_w: 400}, {gpu: rtx-5090, tp: 1}]", "--set",
         "model=meta-llama/Llama-3.1-8B", "--set", "scheduler.max_model_len=8192", "--set",
         "router.kind=" + router, "--set", "workload.arrival={kind: static, qps: 1000}", "--set",
         "workload.lengths={kind: fixed, prompt_tokens: 4096, output_tokens: 2}", "--set",
         "workload.num_requests=3"});
    const CsvTable requests(dir / "requests.csv");
    std::vector<long long> out;
    for (std::size_t i = 0; i < requests.rows().size(); ++i) {
      out.push_back(requests.integer(i, "replica"));
    }
    return out;
  };
  // Aware: the first to the 575 W GPU; the second would wait a whole prefill there, and starts
  // at once at 400 W; the third finds both busy and the 575 W GPU's backlog done first.
  CHECK(replicas_of("power_aware") == std::vector<long long>{1, 0, 1});
  // Blind: equal prices, the first tie to replica 0, then the idle one; the third finds both in
  // their first chunk, and the capped replica's, begun 1 ms earlier, ends later.
  CHECK(replicas_of("cap_blind") == std::vector<long long>{0, 1, 1});
}
}  // namespace servesim::test
