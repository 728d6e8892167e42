#include "tools/sim2real/replay.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "costmodels/analytical/engine_profile.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/hardware/catalog.hpp"
#include "tests/sim2real/experiments_data.hpp"
#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/report.hpp"

using namespace servesim;
using namespace servesim::sim2real;
using Catch::Matchers::Contains;

namespace {

// The measured experiments of data/sim2real and their CSV path.
struct MeasuredRuns {
  std::string csv;
  std::vector<Experiment> runs;
};
MeasuredRuns measured_runs() {
  const std::string csv = test::experiments_csv();
  return MeasuredRuns{csv, read_experiments(csv)};
}

// Checks vLLM V1's per-step limits on every step of a run.
class BudgetChecker final : public RunObserver {
 public:
  BudgetChecker(std::int64_t budget, std::int64_t seats, std::int64_t blocks)
      : budget_(budget), seats_(seats), blocks_(blocks) {}
  void on_step(const StepRecord& s, const BatchShape& shape, const StepCost&) override {
    ++steps;
    const std::int64_t tokens = s.prefill_tokens + s.num_decodes;
    max_tokens = std::max(max_tokens, tokens);
    max_seqs = std::max<std::int64_t>(max_seqs, s.num_prefills + s.num_decodes);
    max_blocks = std::max(max_blocks, s.kv_blocks_used);
    if (tokens > budget_ || s.num_prefills + s.num_decodes > seats_ || s.kv_blocks_used > blocks_ ||
        shape.total_tokens() != tokens) {
      ++violations;
    }
    if (s.num_prefills > 0 && s.num_decodes > 0) ++mixed;
  }
  std::int64_t steps = 0, violations = 0, mixed = 0;
  std::int64_t max_tokens = 0, max_seqs = 0, max_blocks = 0;

 private:
  std::int64_t budget_, seats_, blocks_;
};

}  // namespace

TEST_CASE("every run of experiments.csv becomes a config that resolves its model and GPU",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  for (const auto& e : runs) {
    INFO(e.id);
    const std::string yaml = make_config_yaml(e, ReplayOptions{});
    const RunConfig cfg = RunConfig::parse(ConfigNode::parse(yaml, "generated"));
    CHECK(cfg.replicas.at(0).tp == e.tp);
    CHECK(cfg.replicas.at(0).weights ==
          (e.precision == "FP8" ? Precision::kFp8 : Precision::kBf16));
    CHECK(cfg.scheduler.get_int("max_num_batched_tokens", 0) == e.max_num_batched_tokens);
    CHECK(yaml.find(e.trace_file.empty() ? "kind: stages" : "format: measured") !=
          std::string::npos);
    const BuiltRun run = build_run(cfg);
    REQUIRE(run.fleet.size() == 1);
  }
}

TEST_CASE("an unknown model name is an error naming the CSV line and the run",
          "[sim2real][replay]") {
  Experiment e = test::synthetic_run("x1", "nobody/No-Such-Model-7B", 1.0, 7);
  e.precision = "FP16";
  try {
    replay(e, ReplayOptions{}, "experiments.csv");
    FAIL("no error");
  } catch (const InputError& err) {
    CHECK_THAT(err.what(), Contains("experiments.csv:7: run x1:"));
    CHECK_THAT(err.what(), Contains("nobody/No-Such-Model-7B"));
  }
  Experiment p = test::synthetic_run("x2", "meta-llama/Llama-2-7b-hf", 1.0, 9);
  p.precision = "INT3";
  CHECK_THROWS_WITH(replay(p, ReplayOptions{}, "experiments.csv"),
                    Catch::Equals("experiments.csv:9: run x2: column precision: 'INT3' (expected "
                                  "FP16, BF16 or FP8)"));
}

TEST_CASE("a trace whose row count differs from n_requests_trace is an error and not scored",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  Experiment e = test::find_run(measured.runs, "tv-l2-7b-codegen");
  REQUIRE(e.n_requests_trace == 9000);
  // The same trace cut after its first 100 requests.
  const auto cut = std::filesystem::temp_directory_path() / "servesim_cut_trace.csv";
  {
    std::ifstream in(e.trace_file);
    std::ofstream out(cut);
    std::string line;
    for (int i = 0; i < 101 && std::getline(in, line); ++i) out << line << "\n";
  }
  e.trace_file = cut.string();
  try {
    replay(e, ReplayOptions{}, measured.csv);
    FAIL("no error");
  } catch (const InputError& err) {
    CHECK_THAT(err.what(), Contains("run tv-l2-7b-codegen:") &&
                               Contains("servesim_cut_trace.csv: 100 request rows, but "
                                        "n_requests_trace says 9000"));
  }
  std::filesystem::remove(cut);
}

TEST_CASE("concurrent replays give each run its own result in order and the first failure wins",
          "[sim2real][replay]") {
  // 8B at two rates, and two bad ones.
  const Experiment a = test::synthetic_run("a", "meta-llama/Llama-3.1-8B", 2.0, 2);
  const Experiment b = test::synthetic_run("b", "meta-llama/Llama-3.1-8B", 8.0, 3);
  const std::vector<RunResult> both = replay_all({&a, &b}, ReplayOptions{}, "runs.csv");
  REQUIRE(both.size() == 2);
  CHECK(both[0].experiment == &a);
  CHECK(both[1].experiment == &b);
  CHECK(both[0].sim.e2e_mean == replay(a, ReplayOptions{}, "runs.csv").sim.e2e_mean);
  CHECK(both[1].sim.e2e_mean == replay(b, ReplayOptions{}, "runs.csv").sim.e2e_mean);
  CHECK(both[1].requests == 160);
  const Experiment bad1 = test::synthetic_run("bad1", "nobody/First-7B", 1.0, 7);
  const Experiment bad2 = test::synthetic_run("bad2", "nobody/Second-7B", 1.0, 9);
  for (int i = 0; i < 3; ++i) {  // whatever the schedule
    CHECK_THROWS_WITH(replay_all({&a, &bad1, &b, &bad2}, ReplayOptions{}, "runs.csv"),
                      Contains("runs.csv:7: run bad1:"));
  }
}

TEST_CASE("a replayed trace keeps vLLM V1's token budget, seat limit and KV capacity every step",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  const Experiment& e = test::find_run(runs, "tv-l2-7b-general");
  ConfigNode root = ConfigNode::parse(make_config_yaml(e, ReplayOptions{}), "generated");
  // The first 6000 rows reach the 20 req/s stage, where batches fill up.
  root.apply_override("workload.num_requests=6000");
  root.apply_override("workload.start_s=0");
  Simulation sim(RunConfig::parse(root));
  BudgetChecker check(e.max_num_batched_tokens, e.max_num_seqs, e.kv_blocks_total_gpu);
  const EngineTotals t = sim.run({.observers = {&check}});
  CHECK(t.finished == 6000);
  CHECK(check.steps > 1000);
  CHECK(check.violations == 0);
  CHECK(check.max_tokens <= 2048);
  CHECK(check.max_seqs <= 128);
  CHECK(check.mixed > 0);  // chunked prefill: prefills ride along with decodes
}

TEST_CASE("replaying the 7B codegen trace lands near the measurement (regression guard)",
          "[sim2real][replay][data][e2e]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  const ReplayOptions options;  // the tool's defaults: configs/engines/vllm-v1.yaml
  const RunResult r = replay(test::find_run(runs, "tv-l2-7b-codegen"), options, csv);
  CHECK(r.kind == ReplayKind::kExact);
  CHECK(r.requests == 9000);
  CHECK(r.scored_requests == 9000);
  REQUIRE(r.per_request);
  CHECK(r.per_request->matched == 9000);
  INFO("E2E mean sim " << r.sim.e2e_mean << " real " << r.score.metrics[0].real);
  // A fit run of configs/engines/vllm-v1.yaml: 0.5%, 0.5% and 0.5% when written.
  CHECK(r.score.metrics[0].ape < 4);  // E2E mean
  CHECK(r.score.metrics[6].ape < 4);  // ITL mean
  CHECK(r.score.overall < 5);
  // Below capacity: requests wait about a step, so no queueing note.
  for (const auto& n : r.notes) CHECK_THAT(n, !Contains("simulated queueing"));
  CHECK(r.sim_wait_p99_ms < 100);
  CHECK(r.wall_s < 10);
}

TEST_CASE("a two-stage trace is scored per stage on its contiguous rate x duration rows",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  const Experiment& e =
      test::find_run(runs, "tv-l2-7b-codegen");  // 5 req/s then 10 req/s, 600 s each
  const RunResult r = replay(e, ReplayOptions{}, csv);
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].requests == 3000);
  CHECK(r.stages[1].requests == 6000);
  CHECK(r.stages[0].scored_requests == 3000);
  CHECK(r.stages[1].scored_requests == 6000);
  // Scored against the CSV's s0_* / s1_* columns.
  CHECK(r.stages[0].real.itl_mean == Approx(9.264));
  CHECK(r.stages[1].real.e2e_mean == Approx(2215.948));
  CHECK(r.stages[1].score.metrics[0].sim == Approx(r.stages[1].sim.e2e_mean));
  // The run's mean is the request-weighted mean of the stages' means.
  CHECK(r.sim.e2e_mean ==
        Approx((3000 * r.stages[0].sim.e2e_mean + 6000 * r.stages[1].sim.e2e_mean) / 9000));
  CHECK(r.sim.ttft_mean ==
        Approx((3000 * r.stages[0].sim.ttft_mean + 6000 * r.stages[1].sim.ttft_mean) / 9000));
  // More load, longer steps: the second stage's simulated ITL is the larger, as measured.
  CHECK(r.stages[1].sim.itl_mean > r.stages[0].sim.itl_mean);
  CHECK_FALSE(r.sensitivity);  // not asked for
  CHECK(std::isnan(r.stages[0].e2e_gain));
  // One stage only: no per-stage rows.
  CHECK(replay(test::find_run(runs, "tv-l2-7b-roleplay"), ReplayOptions{}, csv).stages.empty());
}

TEST_CASE("the step-time sensitivity is near 1 at light load and grows near capacity",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  ReplayOptions o;
  o.sensitivity_delta = 0.02;
  // Light load (roleplay, 6 req/s): latency follows step time about one to one.
  const RunResult light = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(light.sensitivity);
  CHECK(light.sensitivity->delta == 0.02);
  CHECK(light.sensitivity->up_pct.e2e_mean > 0);
  CHECK(light.sensitivity->down_pct.e2e_mean < 0);
  CHECK(light.sensitivity->e2e_gain > 0.8);
  CHECK(light.sensitivity->e2e_gain < 2.0);
  // General at 20 req/s runs near the simulated capacity: a step-time error grows in the queue,
  // in that stage far more than in the 8 req/s one.
  const RunResult heavy = replay(test::find_run(runs, "tv-l2-7b-general"), o, csv);
  REQUIRE(heavy.sensitivity);
  REQUIRE(heavy.stages.size() == 2);
  CHECK(heavy.sensitivity->e2e_gain > 2.0);
  CHECK(heavy.stages[1].e2e_gain > 2.0);
  CHECK(heavy.stages[0].e2e_gain < 2.0);
  // The extra replays leave the scored replay as it is.
  const RunResult plain = replay(test::find_run(runs, "tv-l2-7b-general"), ReplayOptions{}, csv);
  CHECK(plain.sim.e2e_mean == heavy.sim.e2e_mean);
}

TEST_CASE(
    "the online learner learns from the first fifth of a trace only and is scored on the rest",
    "[sim2real][replay][online][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  ReplayOptions o;
  o.online = "frozen";
  const RunResult frozen = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(frozen.online);
  const OnlineResult& f = *frozen.online;
  // 7,200 rows: it learns from requests 0 … 1,439 and never from the 5,760 it is scored on.
  CHECK(f.learned == 1440);
  CHECK(f.observations == 1440);
  CHECK(f.scored_requests == 5760);
  CHECK(f.static_score.overall < 2);  // the shipped fit on its own run (0.3% when written)
  CHECK(f.learn == "scale");
  CHECK(std::abs(f.step_scale - 1) < 0.05);  // the shipped step prices are near right here
  CHECK(f.step_offset_ms == 0);
  // The static replay is the run's own; peeking learns from every request.
  CHECK(frozen.sim.e2e_mean ==
        replay(test::find_run(runs, "tv-l2-7b-roleplay"), ReplayOptions{}, csv).sim.e2e_mean);
  o.online = "peeking";
  const RunResult peeking = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(peeking.online);
  CHECK(peeking.online->observations == 7200);
  CHECK(peeking.online->static_score.overall == Approx(f.static_score.overall));
  // The floor learner: the shipped floor is near right too.
  o.online = "frozen";
  o.online_learn = "floor";
  const RunResult floor = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(floor.online);
  CHECK(std::abs(floor.online->step_offset_ms) < 1);
  CHECK(floor.online->step_scale == 1);
}

TEST_CASE("under a shift the scale learner recovers what a floor cannot",
          "[sim2real][replay][online][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  // No engine profile: the hardware file's uncalibrated constants, whose decode steps are too
  // slow by more than their whole host floor (15.6% static when written; scale 3.0%, floor 6.8%).
  ReplayOptions o;
  o.online = "frozen";
  o.engine = "{name: bare}";
  const RunResult scale = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(scale.online);
  const OnlineResult& s = *scale.online;
  CHECK(s.online_score.overall < s.static_score.overall / 2);
  CHECK(s.step_scale < 0.95);  // it learned that steps are faster than priced
  o.online_learn = "floor";
  const RunResult floor = replay(test::find_run(runs, "tv-l2-7b-roleplay"), o, csv);
  REQUIRE(floor.online);
  CHECK(floor.online->step_offset_ms == Approx(-0.5));  // at its bound: minus the whole floor
  CHECK(s.online_score.overall < floor.online->online_score.overall);
}

TEST_CASE("a run without a trace divides ITL by the output count its measurement implies",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  // Run 67 generated output_len = 1448 tokens per request (ignore_eos) while its ITL counts
  // ~1120 (re-tokenized text), as the traced Llama-2-7b runs do (measured_output_len_mean).
  const Experiment& e = test::find_run(runs, "67");
  REQUIRE(e.trace_file.empty());
  const RunResult r = replay(e, ReplayOptions{}, csv);
  CHECK(r.mean_output_tokens == Approx(*implied_output_tokens(e.real)));
  CHECK(r.mean_output_tokens == Approx(1119.7).margin(0.1));
  CHECK(r.sim.itl_mean ==
        Approx((r.sim.e2e_mean - r.sim.ttft_mean) / (r.mean_output_tokens - 1)).epsilon(1e-12));
  // A traced run keeps the trace rows' mean, which equals the measured column.
  const RunResult t = replay(test::find_run(runs, "tv-l2-7b-roleplay"), ReplayOptions{}, csv);
  CHECK(t.mean_output_tokens == Approx(206.4).margin(0.05));
}

TEST_CASE("the per-request overhead shifts TTFT and E2E of every request and leaves ITL alone",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  ReplayOptions none;
  none.engine = "{name: a, request_overhead_ns: 0}";
  ReplayOptions five;
  five.engine = "{name: b, request_overhead_ns: 5000000}";
  const Experiment& e = test::find_run(runs, "tv-l2-7b-roleplay");
  const RunResult a = replay(e, none, csv);
  const RunResult b = replay(e, five, csv);
  CHECK(b.sim.ttft_mean == Approx(a.sim.ttft_mean + 5).epsilon(1e-9));
  CHECK(b.sim.e2e_mean == Approx(a.sim.e2e_mean + 5).epsilon(1e-9));
  CHECK(b.sim.ttft_p99 == Approx(a.sim.ttft_p99 + 5).epsilon(1e-9));
  CHECK(b.sim.itl_mean == Approx(a.sim.itl_mean).epsilon(1e-9));
}

TEST_CASE("with --async-scheduling auto (default), vLLM images from 0.12 on get it in their config",
          "[sim2real][replay]") {
  CHECK(vllm_version("vllm/vllm-openai:v0.15.1") == std::make_pair(0, 15));
  CHECK(vllm_version("ghcr.io/inference-sim/vllm:0.6.8 (fork w/ journey+step tracing)") ==
        std::make_pair(0, 6));
  CHECK_FALSE(vllm_version("vllm/vllm-openai:latest"));
  CHECK_FALSE(vllm_version("vllm"));
  Experiment e = test::synthetic_run("x", "meta-llama/Llama-2-7b-hf");
  ReplayOptions automatic;
  automatic.async_scheduling = "auto";
  e.vllm_image = "vllm/vllm-openai:v0.15.1";
  // vllm-v1 says so itself.
  CHECK_THAT(make_config_yaml(e, automatic),
             Contains("async_scheduling: true   # the engine profile's"));
  ReplayOptions off;
  off.async_scheduling = "off";
  CHECK_THAT(make_config_yaml(e, off), Contains("async_scheduling: false"));
  // A profile that does not say: by the image's version.
  automatic.engine = off.engine = "{name: plain}";
  CHECK_THAT(make_config_yaml(e, automatic), Contains("async_scheduling: true   # vLLM >= 0.12"));
  e.vllm_image = "vllm/vllm-openai:v0.11.0";
  CHECK_THAT(make_config_yaml(e, automatic), Contains("async_scheduling: false"));
}

TEST_CASE("both engines are vLLM V1: piecewise CUDA graphs to min(2 max_num_seqs, 512), async",
          "[sim2real][replay]") {
  Experiment e = test::synthetic_run("x", "meta-llama/Llama-2-7b-hf");
  e.max_num_seqs = 128;
  // The fork's tag (0.6.8) is below 0.12, but its profile says what it runs (upstream V1).
  e.vllm_image = "ghcr.io/inference-sim/vllm:0.6.8 (fork w/ journey+step tracing)";
  std::string y = make_config_yaml(e, ReplayOptions{});
  CHECK_THAT(y, Contains("cuda_graph_mode: piecewise"));
  CHECK_THAT(y, Contains("cuda_graph_max_tokens: 256 "));
  CHECK_THAT(y, Contains("async_scheduling: true   # the engine profile's"));
  e.vllm_image = "vllm/vllm-openai:v0.15.1";
  e.max_num_seqs = 1024;
  y = make_config_yaml(e, ReplayOptions{});
  CHECK_THAT(y, Contains("cuda_graph_max_tokens: 512 "));
  CHECK_THAT(y, Contains("async_scheduling: true   # the engine profile's"));
  // A profile that says nothing: decode-only graphs (the replica default), async by version.
  ReplicaSpec spec;
  CHECK(spec.cuda_graph_mode == CudaGraphMode::kDecodeOnly);
  ReplayOptions plain;
  plain.engine = "{name: plain}";
  e.vllm_image = "vllm/vllm-openai:v0.11.0";
  y = make_config_yaml(e, plain);
  CHECK_THAT(y, !Contains("cuda_graph_mode") && Contains("async_scheduling: false"));
  plain.engine = "{name: plain, async_scheduling: false}";
  e.vllm_image = "vllm/vllm-openai:v0.15.1";
  CHECK_THAT(make_config_yaml(e, plain),
             Contains("async_scheduling: false   # the engine profile's"));
  CHECK_THROWS_WITH(
      EngineProfile::parse(ConfigNode::parse("{name: x, cuda_graph_mode: full}", "x.yaml")),
      Contains("unknown cuda_graph_mode 'full' (known: decode_only, piecewise)"));
}

TEST_CASE("each run replays with the engine profile that claims its image", "[sim2real][replay]") {
  Experiment e = test::synthetic_run("x", "meta-llama/Llama-2-7b-hf", 1.0, 9);
  CHECK(engine_for(e, ReplayOptions{}) == "vllm-v1");
  e.vllm_image = "ghcr.io/inference-sim/vllm:0.6.8 (fork w/ journey+step tracing)";
  CHECK(engine_for(e, ReplayOptions{}) == "vllm-inference-sim");
  e.vllm_image = "lmsysorg/sglang:v0.4";
  CHECK(engine_for(e, ReplayOptions{}) == "sglang");
  e.vllm_image = "example.org/other-engine:v1";
  CHECK_THROWS_WITH(engine_for(e, ReplayOptions{}),
                    Contains("other-engine") && Contains("--engine"));
  // replay names the CSV line and the run, like every other input error
  CHECK_THROWS_WITH(replay(e, ReplayOptions{}, "runs.csv"),
                    Contains("runs.csv:9: run x:") && Contains("other-engine"));
  ReplayOptions forced;
  forced.engine = "vllm-v1";
  CHECK(engine_for(e, forced) == "vllm-v1");
}

TEST_CASE("the held-out traced runs stay within their error targets (regression guard)",
          "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  Report report;
  for (const std::string id : {"tv-l2-7b-general", "5"}) report.held_out.insert(id);
  REQUIRE(default_held_out() == "tv-l2-7b-general,5");
  report.runs = replay_all({&test::find_run(runs, "tv-l2-7b-general"), &test::find_run(runs, "5")},
                           ReplayOptions{}, csv);
  summarize(report);
  REQUIRE(report.sets.size() == 1);
  REQUIRE(report.sets[0].set == ScoreSet::kHeldOut);
  const MedianScore& m = report.sets[0].median;
  // Median APE over the two runs; 2.2 / 4.9 / 2.2 / 3.8 when written.
  CHECK(m.metrics[0] <= 5);   // E2E mean
  CHECK(m.metrics[3] <= 12);  // TTFT mean
  CHECK(m.metrics[6] <= 5);   // ITL mean
  CHECK(m.overall <= 8);
}

TEST_CASE("a replay whose simulated server queues up says so", "[sim2real][replay][data]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  // The reasoning run overloaded the real server too (4068 of 4800 requests failed).
  const RunResult r = replay(test::find_run(runs, "tv-l2-7b-reasoning"), ReplayOptions{}, csv);
  CHECK(r.sim_wait_p99_ms > 10000);
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("simulated queueing") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("a fit is written into an engine file line by line, keeping everything else",
          "[sim2real][fit]") {
  EngineConstants c;
  c.graph_floor_ns = 250000;
  c.eager_floor_ns = 3000000;
  c.decode_bw_fraction = 0.89;
  c.request_overhead_ns = {{"e", 4e6}};
  FitResult f;
  f.runs = {"a", "b"};
  f.objective = 4.16;
  const std::string before =
      "# comment kept\nname: e\nsource: |\n  kept\nrequest_overhead_ns: 1\n"
      "analytical: {collectives: {algorithm: vllm_custom, custom_floor_ns: 1}}\ngpus:\n  "
      "h100-sxm:\n"
      "    host: {graph_floor_ns: 1, eager_floor_ns: 2}\n"
      "    analytical: {attention: {decode_bw_fraction: 0.5}}\n  h200:\n"
      "    host: {graph_floor_ns: 7, eager_floor_ns: 8}\nfitted: {old: 1}\n";
  const std::string after = update_engine_file(before, "e", "h100-sxm", c, f);
  CHECK_THAT(after, Contains("# comment kept\nname: e\nsource: |\n  kept\n"));
  CHECK_THAT(after, Contains("request_overhead_ns: 4000000\n"));
  CHECK_THAT(after,
             Contains("analytical: {collectives: {algorithm: vllm_custom, custom_floor_ns: 1}}\n"));
  CHECK_THAT(after, Contains("  h100-sxm:\n    host: {graph_floor_ns: 250000, eager_floor_ns: "
                             "3000000}\n    analytical: {attention: {decode_bw_fraction: 0.89}}\n"
                             "  h200:\n    host: {graph_floor_ns: 7, eager_floor_ns: 8}\n"));
  CHECK_THAT(after, Contains("fitted: {runs: [a, b]"));
  CHECK_THAT(after, Contains("objective_pct: 4.16}"));
  CHECK_THAT(after, !Contains("old: 1"));
  // A GPU the file does not list yet is added under gpus:, and a file without gpus: gets one.
  const std::string added = update_engine_file(before, "e", "a100-80gb", c, f);
  CHECK_THAT(added, Contains("  a100-80gb:\n    host: {graph_floor_ns: 250000"));
  CHECK_THAT(added, Contains("decode_bw_fraction: 0.5}"));  // h100-sxm untouched
  const std::string fresh = update_engine_file("name: e\n", "e", "h100-sxm", c, f);
  CHECK_THAT(fresh, Contains("gpus:\n  h100-sxm:\n    host:"));
  CHECK_NOTHROW(EngineProfile::parse(ConfigNode::parse(after, "after")));
  CHECK_NOTHROW(EngineProfile::parse(ConfigNode::parse(fresh, "fresh")));
}

TEST_CASE("a held-out run must exist and must not be scored with constants fitted on it",
          "[sim2real][fit]") {
  const auto measured = measured_runs();
  const auto& [csv, runs] = measured;
  const std::set<std::string> standard = {"tv-l2-7b-general", "5"};
  CHECK_NOTHROW(check_held_out(runs, standard, ReplayOptions{}, csv, false));
  CHECK_THROWS_WITH(check_held_out(runs, {"nosuch"}, ReplayOptions{}, csv, true),
                    Catch::Contains("--held-out: no run 'nosuch'"));
  // The shipped vllm-v1 profile was fitted on tv-l2-7b-codegen: holding it out is refused, unless
  // a --fit substitute (fitted without it) replays it.
  CHECK_THROWS_WITH(check_held_out(runs, {"tv-l2-7b-codegen"}, ReplayOptions{}, csv, false),
                    Catch::Contains("run tv-l2-7b-codegen: it is held out, but engine profile "
                                    "'vllm-v1' was fitted on it"));
  CHECK_NOTHROW(check_held_out(runs, {"tv-l2-7b-codegen"}, ReplayOptions{}, csv, true));
  ReplayOptions refit;
  refit.engine_substitutes["vllm-v1"] = "{}";
  CHECK_NOTHROW(check_held_out(runs, {"tv-l2-7b-codegen"}, refit, csv, false));
}
