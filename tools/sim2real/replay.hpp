#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/input_error.hpp"
#include "sim/util/constants.hpp"
#include "tools/common/progress.hpp"
#include "tools/sim2real/experiments.hpp"
#include "tools/sim2real/score.hpp"

namespace servesim::sim2real {

// How sim2real turns a row of experiments.csv into a run.
struct ReplayOptions {
  std::uint64_t seed = 42;
  // scheduler.enable_prefix_caching in the generated configs (vLLM V1 default: on).
  bool prefix_caching = true;
  // Runs whose harness sets ignore_eos generated `output_len` tokens per request; the traces
  // count the tokens of the re-tokenized text instead (Llama-2-7b: mean 195 of 247, with zeros,
  // while E2E − TTFT does not depend on that count). "nominal": replay output_len tokens for
  // every successful row; "trace": replay the trace's counts as they are.
  std::string output_tokens = "nominal";
  // Seconds between the end of one stage and the start of the next in regenerated workloads:
  // inference-perf's stage transition, 4.13–4.20 s in the three two-stage traces.
  double stage_gap_s = 4.15;
  // The serving engine's constants (an EngineProfile, see costmodels/analytical/
  // engine_profile.hpp): a name under configs/engines/, a file path, or an inline YAML flow
  // map, for every run; empty (default): per run, the profile whose `images` matches the run's
  // vllm_image. It sets the analytical cost model's host and attention constants per GPU and the
  // client-observed request overhead added to every request's TTFT and E2E.
  std::string engine;
  // Substitutes for named profiles (name → inline YAML), used by the fit for trial constants.
  std::map<std::string, std::string> engine_substitutes;
  // "auto" (default): scheduler.async_scheduling as the engine profile says (`async_scheduling`),
  // else for images whose vLLM turns it on by default (≥ 0.12); "off": never.
  std::string async_scheduling = "auto";
  // > 0: replay twice more with every step time × (1 ± delta) and report how far the metrics
  // move (RunResult::sensitivity); 0 (default): no extra replays.
  double sensitivity_delta = 0;
  // "frozen" or "peeking": exact replays run once more under the E1.19 online learner
  // (costmodels/online/online_cost_model.hpp), which learns the step floor and request overhead
  // from the measured latencies of the first learn_fraction of the requests (frozen) or of every
  // request (peeking, a diagnostic); both it and the static replay are then scored on the rest
  // (RunResult::online). "" (default): no online replay.
  std::string online;
  double online_alpha = 0.05;
  // What a step learns: "scale" (its price × a learned factor) or "floor" (plus a learned host
  // floor, the online-learning experiment E1.19 in tools/README.md).
  std::string online_learn = "scale";
  double learn_fraction = 0.2;
};

// The workload as replayed.
enum class ReplayKind { kExact, kApproximate };
const char* replay_kind_name(ReplayKind kind);

// The config (YAML text) sim2real runs for one experiment. The trace path is absolute, so the
// file can be written anywhere and rerun with `simulate`.
std::string make_config_yaml(const Experiment& e, const ReplayOptions& options,
                             const std::string& output_dir = "");

// (major, minor) of the vLLM image tag ("vllm/vllm-openai:v0.15.1" → (0, 15)); none when the
// tag has no version.
std::optional<std::pair<int, int>> vllm_version(const std::string& image);
// vLLM turned async scheduling on by default in 0.12 (vllm-project/vllm#27614): the generated
// config sets scheduler.async_scheduling for such images.
bool async_scheduling_default(const Experiment& e);

// The engine profile a run replays with (ReplayOptions::engine, else by image); InputError when
// no profile under configs/engines/ claims the run's image.
std::string engine_for(const Experiment& e, const ReplayOptions& options);

// `s` as a YAML double-quoted scalar (for the generated configs).
std::string quoted(const std::string& s);

// An input error about run `e` of the CSV at `csv_path`: "<csv>:<line>: run <id>: <what>".
InputError run_error(const std::string& csv_path, const Experiment& e, const std::string& what);

// Runs whose notes say the load generator fell behind ("unsafe": 13.9 of 20 req/s achieved in
// stage 1): their trace holds the scheduled arrivals, not what the server saw, after stage 0.
// Such a traced run is replayed and scored on stage 0 only (the s0_* metrics).
bool stage0_only(const Experiment& e);

// Run groups in the report.
enum class RunGroup { kScored, kOverloaded };
// Overloaded: queueing dominates the measurement (TTFT mean > 20% of E2E mean) or more than 1%
// of the requests failed; such a replay is reported but left out of the medians.
RunGroup classify(const Experiment& e);

// One load stage of a multi-stage run, scored against its s<k>_* metrics: inference-perf issues
// exactly rate × duration requests per stage, in order, so stage k is a contiguous range of
// trace rows (or of the regenerated workload's requests).
struct StageResult {
  std::size_t index = 0;
  Stage stage;
  std::int64_t requests = 0;         // rows (requests) of the stage
  std::int64_t scored_requests = 0;  // simulated requests the metrics use
  Metrics sim;
  Metrics real;  // s<index>_*
  RunScore score;
  double e2e_gain = kNaN;  // as Sensitivity::e2e_gain, over this stage's requests
};

// How far a run's simulated metrics move when every step time is off by ±delta: a 1% step-time
// error moves E2E mean by about e2e_gain %. Near 1 at light load; well above 1 near capacity,
// where the queue turns small pricing errors into large latency errors, so an answer there can
// be trusted only as far as step pricing is accurate to 1/e2e_gain.
struct Sensitivity {
  double delta = 0;
  Metrics up_pct;       // signed change (%) of each metric with step times × (1 + delta)
  Metrics down_pct;     // … × (1 − delta)
  double e2e_gain = 0;  // (E2E(+delta) − E2E(−delta)) / E2E / (2 delta)
};

// The online learner's replay of an exact run beside the static one, both scored on the
// requests [learned, n) the frozen learner never saw.
struct OnlineResult {
  std::string mode;
  std::string learn;  // "scale" or "floor"
  double alpha = 0;
  std::int64_t learned = 0;  // the first requests (by id) frozen learns from; the rest are scored
  std::int64_t observations = 0;  // observations the learner used
  double step_offset_ms = 0;      // learned step floor offset at the end (floor)
  double step_scale = 1;          // learned step scale at the end (scale)
  double overhead_offset_ms = 0;  // learned request overhead offset at the end
  // Observations until the step offset stays within 5% (or 10 µs) of its final value (floor), or
  // the scale within 5% of its final distance from 1 (or 0.001).
  std::int64_t converged_after = 0;
  std::int64_t scored_requests = 0;  // the rest, as scored
  Metrics real;                      // the measured metrics of the rest
  RunScore static_score;             // the static replay on the rest
  RunScore online_score;             // the online replay on the rest
};

struct RunResult {
  const Experiment* experiment = nullptr;
  ReplayKind kind = ReplayKind::kApproximate;
  RunGroup group = RunGroup::kScored;
  std::vector<std::string> notes;  // what is not modelled or approximated for this run
  std::string engine;              // the engine profile's name (or inline YAML)
  std::string config_yaml;
  Metrics sim;
  Metrics real;  // what it is scored against: summ_*, or s0_* for a stage-0-only replay
  bool stage0_only = false;
  RunScore score;
  // Per stage, for runs of two or more stages with per-stage measurements (not for stage-0-only
  // replays, which are scored on stage 0 as a whole); diagnostic, outside the medians.
  std::vector<StageResult> stages;
  std::optional<Sensitivity> sensitivity;    // when ReplayOptions::sensitivity_delta > 0
  std::optional<RequestErrors> per_request;  // exact replays only
  std::optional<OnlineResult> online;        // exact replays with ReplayOptions::online
  std::int64_t requests = 0;                 // simulated requests
  std::int64_t scored_requests = 0;          // used for the simulated metrics
  std::int64_t preemptions = 0;
  double sim_wait_p99_ms = 0;  // simulated arrival → first scheduled step, p99
  // The ITL denominator used: the trace rows' mean output, or for a run without a trace the
  // count implied by the measured summary (implied_output_tokens), else the simulated mean.
  double mean_output_tokens = 0;
  double wall_s = 0;
};

// Builds and runs one experiment in process and scores it against the measured metrics.
// Throws InputError for an unknown model or GPU name (naming the CSV line) and bad traces.
RunResult replay(const Experiment& e, const ReplayOptions& options,
                 const std::string& csv_path = "");

// replay() of every experiment, concurrently (oneTBB; each replay is independent and
// deterministic), results in input order. When several fail, the first in input order's error
// is thrown, so the outcome does not depend on the schedule.
// `progress`, when given, counts the runs as they end.
std::vector<RunResult> replay_all(const std::vector<const Experiment*>& experiments,
                                  const ReplayOptions& options, const std::string& csv_path = "",
                                  Progress* progress = nullptr);

}  // namespace servesim::sim2real
