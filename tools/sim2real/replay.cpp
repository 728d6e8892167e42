#include "tools/sim2real/replay.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/online/online_cost_model.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/hardware/catalog.hpp"
#include "tools/sim2real/kv_offload_replay.hpp"

namespace servesim::sim2real {
namespace {

// Per-request times of a run, indexed by request id (= the workload's yield order).
class LatencyRecorder final : public RunObserver {
 public:
  explicit LatencyRecorder(double overhead_ms = 0) : overhead_ms_(overhead_ms) {}
  void on_request_done(const Request& r, bool rejected) override {
    const auto id = static_cast<std::size_t>(r.id);
    if (latencies.size() <= id) {
      latencies.resize(id + 1);
      outputs.resize(id + 1);
    }
    outputs[id] = r.spec.output_tokens;
    if (rejected || r.first_token < 0 || r.finished < 0) return;
    if (learner != nullptr && id < measured->size() && (*measured)[id]) {
      const Latency& m = *(*measured)[id];
      learner->observe({r.id, m.ttft_ms * 1e6, m.e2e_ms * 1e6,
                        static_cast<double>(r.first_token - r.spec.arrival),
                        static_cast<double>(r.finished - r.spec.arrival), r.spec.output_tokens});
    }
    latencies[id] =
        Latency{static_cast<double>(r.finished - r.spec.arrival) / 1e6 + overhead_ms_,
                static_cast<double>(r.first_token - r.spec.arrival) / 1e6 + overhead_ms_};
    waits_ms.push_back(static_cast<double>(r.first_scheduled - r.spec.arrival) / 1e6);
    preemptions += r.preemptions;
  }
  void on_step(const StepRecord& s, const BatchShape&, const StepCost&) override {
    step_ns += static_cast<double>(s.duration_ns);
    ++steps;
  }
  std::vector<std::optional<Latency>> latencies;
  std::vector<std::int32_t> outputs;
  std::vector<double> waits_ms;  // arrival → first scheduled, per finished request
  std::int64_t preemptions = 0;
  std::int64_t arrived = 0;  // requests the workload issued (EngineTotals::arrived)
  double step_ns = 0;
  std::int64_t steps = 0;
  // When set, every finished request with a measurement is shown to the learner.
  OnlineCostModel* learner = nullptr;
  const std::vector<std::optional<Latency>>* measured = nullptr;

 private:
  double overhead_ms_;
};

// Builds and runs `config` with every step time multiplied by `step_scale`, recording each
// request.
LatencyRecorder record_run(const RunConfig& config, double step_scale) {
  Simulation sim(config);
  LatencyRecorder rec(static_cast<double>(sim.cost_model().request_overhead_ns()) / 1e6);
  const ScaledCostModel scaled(sim.cost_model(), step_scale);
  const CostModel* cost = step_scale == 1.0 ? nullptr : &scaled;
  rec.arrived = sim.run({.cost_model = cost, .observers = {&rec}}).arrived;
  return rec;
}

// Runs `config` under the online learner fed with `measured` (by request id). The latencies
// carry the learner's final request overhead (frozen: fixed since its last learned request).
LatencyRecorder record_online_run(const RunConfig& config,
                                  const std::vector<std::optional<Latency>>& measured,
                                  const OnlineCostModel::Options& options, OnlineResult& result) {
  Simulation sim(config);
  OnlineCostModel online(sim.cost_model(), options);
  LatencyRecorder rec;
  rec.learner = &online;
  rec.measured = &measured;
  rec.arrived = sim.run({.cost_model = &online, .observers = {&rec}}).arrived;
  const double overhead_ms = static_cast<double>(online.request_overhead_ns()) / 1e6;
  for (auto& l : rec.latencies) {
    if (l) {
      l->e2e_ms += overhead_ms;
      l->ttft_ms += overhead_ms;
    }
  }
  rec.learner = nullptr;  // `online` ends here
  result.observations = online.observations();
  result.step_offset_ms = online.step_offset_ns() / 1e6;
  result.step_scale = online.step_scale();
  result.overhead_offset_ms = online.overhead_offset_ns() / 1e6;
  const std::vector<double>& h = online.history();
  const bool scale = options.learn == OnlineCostModel::Learn::kScale;
  const double start = scale ? 1 : 0;
  const double last = h.empty() ? start : h.back();
  const double band = std::max(scale ? 1e-3 : 10e3, 0.05 * std::abs(last - start));
  std::size_t k = h.size();
  while (k > 0 && std::abs(h[k - 1] - last) <= band) --k;
  result.converged_after = static_cast<std::int64_t>(k);
  return rec;
}

// Signed change (%) of every metric from `base` to `moved`.
Metrics change_pct(const Metrics& base, const Metrics& moved) {
  Metrics d;
  for (std::size_t i = 0; i < metric_names().size(); ++i) {
    set_metric(d, i, (metric(moved, i) - metric(base, i)) / metric(base, i) * 100.0);
  }
  return d;
}

std::string precision_key(const Experiment& e) {
  const std::string p = lowercase(e.precision);
  if (p == "fp8") return "fp8";
  if (p == "fp16") return "fp16";
  if (p == "bf16" || p.empty()) return "bf16";
  throw InputError(fmt::format("column precision: '{}' (expected FP16, BF16 or FP8)", e.precision));
}

bool ignores_eos(const Experiment& e) {
  return e.harness.find("ignore_eos=true") != std::string::npos;
}

}  // namespace

std::optional<std::pair<int, int>> vllm_version(const std::string& image) {
  // The first "<major>.<minor>" after the image's tag separator (':'), e.g. "…:v0.15.1".
  const auto colon = image.find(':');
  if (colon == std::string::npos) return std::nullopt;
  std::size_t i = colon + 1;
  if (i < image.size() && (image[i] == 'v' || image[i] == 'V')) ++i;
  const char* begin = image.c_str() + i;
  char* end = nullptr;
  const auto major = static_cast<int>(std::strtol(begin, &end, 10));
  if (end == begin || *end != '.') return std::nullopt;
  begin = end + 1;
  const auto minor = static_cast<int>(std::strtol(begin, &end, 10));
  if (end == begin) return std::nullopt;
  return std::make_pair(major, minor);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

InputError run_error(const std::string& csv_path, const Experiment& e, const std::string& what) {
  return InputError(fmt::format("{}:{}: run {}: {}", csv_path, e.line, e.id, what));
}

std::string engine_for(const Experiment& e, const ReplayOptions& o) {
  if (!o.engine.empty()) return o.engine;
  if (auto name = EngineProfile::find_for_image(e.vllm_image)) return *name;
  throw InputError(fmt::format(
      "vllm_image '{}': no engine profile in configs/engines/ claims it (expected a profile "
      "whose `images:` occurs in it, or pass --engine)",
      e.vllm_image));
}

namespace {

// The engine profile text for the generated config: a fit's substitute, or the name itself.
std::string engine_text(const Experiment& e, const ReplayOptions& o) {
  const std::string name = engine_for(e, o);
  const auto it = o.engine_substitutes.find(name);
  return it == o.engine_substitutes.end() ? name : it->second;
}

}  // namespace

bool async_scheduling_default(const Experiment& e) {
  const auto v = vllm_version(e.vllm_image);
  return v && *v >= std::make_pair(0, 12);
}

const char* replay_kind_name(ReplayKind kind) {
  return kind == ReplayKind::kExact ? "exact" : "approximate";
}

bool stage0_only(const Experiment& e) {
  return !e.trace_file.empty() && e.notes.find("unsafe") != std::string::npos &&
         e.stages.size() > 1 && !e.stage_real.empty();
}

RunGroup classify(const Experiment& e) {
  const bool failed = e.n_requests_trace > 0 && static_cast<double>(e.n_failed_trace) >
                                                    0.01 * static_cast<double>(e.n_requests_trace);
  const bool queueing = e.real.ttft_mean > 0.2 * e.real.e2e_mean;
  return failed || queueing ? RunGroup::kOverloaded : RunGroup::kScored;
}

std::string make_config_yaml(const Experiment& e, const ReplayOptions& o,
                             const std::string& output_dir) {
  std::string name = "sim2real_";
  for (char c : e.id) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  std::string y;
  y += fmt::format("# Generated by sim2real from experiments.csv line {} (run {}, folder {}).\n",
                   e.line, e.id, e.folder);
  y += fmt::format("# vLLM {}; harness: {}\n", e.vllm_image, e.harness);
  y += fmt::format("name: {}\nseed: {}\nmodel: {}\n", name, o.seed, quoted(e.model));
  y += "replicas:\n";
  y += fmt::format("  - gpu: {}\n    count: {}\n    tp: {}\n    precision: {}\n",
                   quoted(e.hardware), std::max(1, e.dp), e.tp, precision_key(e));
  y += "    cuda_graphs: true\n";
  const auto profile =
      EngineProfile::load(ConfigNode::parse(engine_text(e, o), fmt::format("run {} engine", e.id)));
  if (profile->cuda_graph_mode == CudaGraphMode::kPiecewise) {
    // vLLM V1: full graphs for decode-only steps, piecewise graphs (attention outside) for steps
    // with prefill, up to the largest capture size, min(2 max_num_seqs, 512).
    y += "    cuda_graph_mode: piecewise   # the engine profile's (vLLM V1)\n";
    y += fmt::format("    cuda_graph_max_tokens: {}   # vLLM: min(2 x max_num_seqs, 512)\n",
                     vllm_v1_graph_max_tokens(e.max_num_seqs > 0 ? e.max_num_seqs : 128));
  }
  y += "scheduler:\n  kind: sarathi       # vLLM V1: chunked prefill always on, one token budget\n";
  if (e.max_num_batched_tokens > 0) {
    y += fmt::format("  max_num_batched_tokens: {}\n", e.max_num_batched_tokens);
  }
  if (e.max_num_seqs > 0) y += fmt::format("  max_num_seqs: {}\n", e.max_num_seqs);
  if (e.max_model_len > 0) y += fmt::format("  max_model_len: {}\n", e.max_model_len);
  y += "  block_size: 16\n";
  y += fmt::format("  gpu_memory_utilization: {}\n", e.gpu_mem_util);
  y += "  watermark: 0        # vLLM V1 admits without a free-block watermark\n";
  if (e.kv_blocks_total_gpu > 0) {
    y += fmt::format("  num_gpu_blocks: {}   # measured (vLLM's log)\n", e.kv_blocks_total_gpu);
  }
  if (o.prefix_caching) y += "  enable_prefix_caching: true   # vLLM V1 default\n";
  // Written either way: the engine profile's setting would otherwise apply in `simulate`.
  if (o.async_scheduling != "auto") {
    y += "  async_scheduling: false   # --async-scheduling off\n";
  } else if (profile->async_scheduling) {
    y += fmt::format("  async_scheduling: {}   # the engine profile's\n",
                     *profile->async_scheduling ? "true" : "false");
  } else if (async_scheduling_default(e)) {
    y += "  async_scheduling: true   # vLLM >= 0.12 default (vllm-project/vllm#27614)\n";
  } else {
    y += "  async_scheduling: false   # vLLM < 0.12 default\n";
  }
  y += "router: {kind: round_robin}\n";
  y += fmt::format("cost_model: {{kind: analytical, engine: {}}}\n", engine_text(e, o));
  y += "workload:\n";
  if (!e.trace_file.empty()) {
    y += fmt::format("  trace: {{format: measured, file: {}", quoted(e.trace_file));
    if (o.output_tokens == "nominal" && ignores_eos(e) && e.output_len > 0) {
      y += fmt::format(", output_tokens: {}", e.output_len);
    }
    y += "}\n";
    y += "  shared_prefix: {group_by: prompt_length}   # a fixed pool of prompts, reused whole\n";
    if (stage0_only(e)) {
      y += fmt::format(
          "  duration_s: {}   # stage 0 only: the load generator fell behind in stage 1\n",
          e.stages[0].duration_s);
    }
  } else {
    y += "  arrival:\n    kind: stages\n";
    y += fmt::format("    gap_s: {}\n    stages:\n", o.stage_gap_s);
    for (const auto& s : e.stages) {
      y += fmt::format("      - {{rate: {}, duration_s: {}}}\n", s.rate, s.duration_s);
    }
    y += "  lengths:\n    kind: shared_prefix_chat\n";
    y += fmt::format(
        "    num_groups: {}\n    users_per_group: {}\n    system_prompt_tokens: {}\n"
        "    question_tokens: {}\n    output_tokens: {}\n",
        std::max<std::int64_t>(1, e.num_groups), std::max<std::int64_t>(1, e.users_per_group),
        e.system_prompt_len, std::max(1, e.question_len), std::max(1, e.output_len));
  }
  y += kv_offload_yaml(e);
  y += "output:\n";
  if (!output_dir.empty()) y += fmt::format("  dir: {}\n", quoted(output_dir));
  y += "  trace: false\n";
  return y;
}

RunResult replay(const Experiment& e, const ReplayOptions& o, const std::string& csv_path) {
  RunResult res;
  res.experiment = &e;
  res.kind = e.trace_file.empty() ? ReplayKind::kApproximate : ReplayKind::kExact;
  res.group = classify(e);
  if (e.stages.empty() && e.trace_file.empty()) {
    throw run_error(csv_path, e, "it has neither a trace_file nor stages");
  }
  if (res.kind == ReplayKind::kApproximate) {
    res.notes.push_back(
        "approximate: no trace; workload regenerated from its definition (stages, lengths)");
  }
  for (auto& note : memory_notes(e)) res.notes.push_back(std::move(note));
  if (e.vllm_image.find("0.6.8") != std::string::npos) {
    res.notes.push_back(
        "vLLM fork 0.6.8 = upstream vLLM V1 (v0.14.1/v0.15.1 image) with tracing patches");
  }
  if (res.group == RunGroup::kOverloaded) {
    res.notes.push_back(fmt::format(
        "overloaded: TTFT mean {:.0f} ms of E2E {:.0f} ms, {} of {} requests failed; replay "
        "not meaningful, left out of the medians",
        e.real.ttft_mean, e.real.e2e_mean, e.n_failed_trace, e.n_requests_trace));
  }
  res.stage0_only = stage0_only(e);
  res.real = res.stage0_only ? e.stage_real[0] : e.real;
  if (res.stage0_only) {
    res.notes.push_back(fmt::format(
        "stage 0 only ({} req/s): the trace's stage-1 arrivals are the schedule, not what the "
        "server saw; scored against the s0_* metrics",
        e.stages[0].rate));
  }
  if (!e.notes.empty()) res.notes.push_back("csv: " + e.notes);
  std::vector<TraceRequest> trace;
  const auto t0 = std::chrono::steady_clock::now();
  RunConfig config;
  LatencyRecorder rec;
  try {
    if (res.kind == ReplayKind::kExact) {
      trace = read_trace(e.trace_file);
      // A cut or padded trace would be scored as if it were the measured run.
      if (e.n_requests_trace > 0 && static_cast<std::int64_t>(trace.size()) != e.n_requests_trace) {
        throw InputError(fmt::format(
            "{}: {} request rows, but n_requests_trace says {} (expected the whole trace)",
            e.trace_file, trace.size(), e.n_requests_trace));
      }
    }
    res.engine = engine_for(e, o);  // resolved once: by image unless forced
    ReplayOptions resolved = o;
    resolved.engine = res.engine;
    res.config_yaml = make_config_yaml(e, resolved);
    const ConfigNode root =
        ConfigNode::parse(res.config_yaml, fmt::format("sim2real config of run {}", e.id));
    config = RunConfig::parse(root, o.seed);
    rec = record_run(config, 1.0);
  } catch (const InputError& err) {
    throw run_error(csv_path, e, err.what());
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.requests = rec.arrived;
  res.preemptions = rec.preemptions;
  // Queueing in the simulation: a request normally waits at most about a step before it is
  // scheduled; a p99 wait of many steps means the simulated server ran at or past capacity, where
  // small step-pricing errors turn into large latency errors.
  if (rec.steps > 0 && !rec.waits_ms.empty()) {
    const double mean_step_ms = rec.step_ns / static_cast<double>(rec.steps) / 1e6;
    res.sim_wait_p99_ms = quantile(rec.waits_ms, 0.99);
    if (res.sim_wait_p99_ms > 10 * mean_step_ms) {
      res.notes.push_back(fmt::format(
          "simulated queueing: p99 wait before the first step {:.0f} ms = {:.0f} mean steps; the "
          "simulated server ran at or past its capacity here, so latency errors mostly measure "
          "capacity, not per-step pricing",
          res.sim_wait_p99_ms, res.sim_wait_p99_ms / mean_step_ms));
    }
  }

  std::vector<std::optional<Latency>> measured;  // exact replays: the trace's rows
  if (res.kind == ReplayKind::kExact) {
    if (res.stage0_only) {
      const double end = e.stages[0].duration_s;
      trace.erase(std::find_if(trace.begin(), trace.end(),
                               [end](const TraceRequest& t) { return t.arrival_s >= end; }),
                  trace.end());
    }
    rec.latencies.resize(std::max(rec.latencies.size(), trace.size()));
    if (rec.latencies.size() != trace.size()) {
      throw run_error(csv_path, e,
                      fmt::format("{}: replayed {} requests of {} rows", e.trace_file,
                                  rec.latencies.size(), trace.size()));
    }
    measured.resize(trace.size());
    for (std::size_t i = 0; i < trace.size(); ++i) {
      if (!trace[i].error) measured[i] = Latency{trace[i].e2e_ms, trace[i].ttft_ms};
    }
    res.per_request = request_errors(rec.latencies, measured);
  }
  // The simulated metrics of requests [lo, hi) of recording `r`, scored against `real`: over the
  // rows the server completed (exact) or every simulated request that finished (approximate).
  // ITL's denominator is the one the measurement used: the mean output of the trace's rows, or
  // for a run without a trace the count implied by its measured E2E, TTFT and ITL (else the
  // simulated mean output).
  const auto simulate_range = [&](const LatencyRecorder& r, std::size_t lo, std::size_t hi,
                                  const Metrics& real, std::int64_t& scored_count,
                                  double& mean_output) {
    std::vector<Latency> scored;
    double out_sum = 0;
    std::int64_t n_out = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      if (res.kind == ReplayKind::kExact) {
        if (trace[i].error) continue;
        out_sum += trace[i].output_tokens;
        ++n_out;
        if (r.latencies[i]) scored.push_back(*r.latencies[i]);
      } else if (r.latencies[i]) {
        scored.push_back(*r.latencies[i]);
        out_sum += r.outputs[i];
        ++n_out;
      }
    }
    scored_count = static_cast<std::int64_t>(scored.size());
    mean_output = out_sum / static_cast<double>(std::max<std::int64_t>(1, n_out));
    if (res.kind == ReplayKind::kApproximate) {
      mean_output = implied_output_tokens(real).value_or(mean_output);
    }
    if (!scored.empty() && !(mean_output > 1)) {
      // ITL = (E2E − TTFT) / (N − 1) has no value when requests produce one token on average.
      throw run_error(csv_path, e,
                      fmt::format("the scored requests average {:.3g} output tokens: ITL is "
                                  "undefined (expected more than 1 per request)",
                                  mean_output));
    }
    return scored.empty() ? Metrics{} : metrics_of(scored, mean_output);
  };
  const std::size_t n = rec.latencies.size();
  res.sim = simulate_range(rec, 0, n, res.real, res.scored_requests, res.mean_output_tokens);
  if (res.scored_requests == 0) {
    throw run_error(csv_path, e, "no request finished in the simulation");
  }
  res.score = score_run(res.sim, res.real);

  // Stage k = requests [begin[k], begin[k + 1]).
  std::vector<std::size_t> begin;
  if (e.stages.size() > 1 && e.stage_real.size() == e.stages.size() && !res.stage0_only) {
    begin.push_back(0);
    for (const Stage& st : e.stages) {
      begin.push_back(begin.back() +
                      static_cast<std::size_t>(std::llround(st.rate * st.duration_s)));
    }
    if (begin.back() != n) {
      res.notes.push_back(fmt::format(
          "no per-stage scores: {} requests, while the stages schedule rate x duration = {}", n,
          begin.back()));
      begin.clear();
    }
  }
  for (std::size_t k = 0; k + 1 < begin.size(); ++k) {
    StageResult st;
    st.index = k;
    st.stage = e.stages[k];
    st.requests = static_cast<std::int64_t>(begin[k + 1] - begin[k]);
    double mean_output = 0;
    st.real = e.stage_real[k];
    st.sim = simulate_range(rec, begin[k], begin[k + 1], st.real, st.scored_requests, mean_output);
    if (st.scored_requests > 0) st.score = score_run(st.sim, st.real);
    res.stages.push_back(std::move(st));
  }

  // The online learner's replay, and both it and the static one on the requests it did not
  // learn from.
  if (!o.online.empty() && res.kind == ReplayKind::kExact) {
    OnlineResult on;
    on.mode = o.online;
    on.learn = o.online_learn;
    on.alpha = o.online_alpha;
    // ⌈f·n⌉, without 0.07 × 7200 = 504.00000000000006 becoming 505.
    on.learned =
        static_cast<std::int64_t>(std::ceil(o.learn_fraction * static_cast<double>(n) - 1e-9));
    OnlineCostModel::Options opts;
    opts.alpha = o.online_alpha;
    opts.mode =
        o.online == "peeking" ? OnlineCostModel::Mode::kPeeking : OnlineCostModel::Mode::kFrozen;
    opts.learn_requests = on.learned;
    opts.learn =
        o.online_learn == "floor" ? OnlineCostModel::Learn::kFloor : OnlineCostModel::Learn::kScale;
    LatencyRecorder learned;
    try {
      learned = record_online_run(config, measured, opts, on);
    } catch (const InputError& err) {
      throw run_error(csv_path, e, err.what());
    }
    learned.latencies.resize(n);
    const auto lo = static_cast<std::size_t>(on.learned);
    std::vector<Latency> rest;
    double out_sum = 0;
    for (std::size_t i = lo; i < n; ++i) {
      if (!measured[i]) continue;
      rest.push_back(*measured[i]);
      out_sum += trace[i].output_tokens;
    }
    std::int64_t static_scored = 0, online_scored = 0;
    double mean_output = 0;
    if (!rest.empty()) {
      on.real = metrics_of(rest, out_sum / static_cast<double>(rest.size()));
      on.static_score =
          score_run(simulate_range(rec, lo, n, on.real, static_scored, mean_output), on.real);
      on.online_score =
          score_run(simulate_range(learned, lo, n, on.real, online_scored, mean_output), on.real);
    }
    if (static_scored > 0 && online_scored > 0) {
      on.scored_requests = online_scored;
      res.online = on;
    } else {
      res.notes.push_back(fmt::format(
          "online: no request after the first {} was measured and simulated in both replays; "
          "not scored",
          on.learned));
    }
  }

  // The same replay with every step time off by ±delta: how far a step-pricing error carries
  // into the answer (near capacity, queueing multiplies it).
  if (o.sensitivity_delta > 0) {
    Sensitivity sens;
    sens.delta = o.sensitivity_delta;
    std::array<LatencyRecorder, 2> moved;
    tbb::parallel_invoke([&] { moved[0] = record_run(config, 1 + o.sensitivity_delta); },
                         [&] { moved[1] = record_run(config, 1 - o.sensitivity_delta); });
    for (auto& r : moved) r.latencies.resize(n);
    const auto gain = [&](std::size_t lo, std::size_t hi, const Metrics& real, const Metrics& base,
                          Metrics& up, Metrics& down) {
      std::int64_t count = 0;
      double mean_output = 0;
      up = change_pct(base, simulate_range(moved[0], lo, hi, real, count, mean_output));
      down = change_pct(base, simulate_range(moved[1], lo, hi, real, count, mean_output));
      return (up.e2e_mean - down.e2e_mean) / (200.0 * o.sensitivity_delta);
    };
    sens.e2e_gain = gain(0, n, res.real, res.sim, sens.up_pct, sens.down_pct);
    for (StageResult& st : res.stages) {
      if (st.scored_requests == 0) continue;
      Metrics up, down;
      st.e2e_gain = gain(begin[st.index], begin[st.index + 1], st.real, st.sim, up, down);
    }
    res.sensitivity = sens;
    if (sens.e2e_gain > 2) {
      res.notes.push_back(fmt::format(
          "fragile: a 1% step-time error moves the simulated E2E mean by {:.1f}%; the run sits "
          "near the simulated server's capacity",
          sens.e2e_gain));
    }
  }
  return res;
}

std::vector<RunResult> replay_all(const std::vector<const Experiment*>& experiments,
                                  const ReplayOptions& options, const std::string& csv_path,
                                  Progress* progress) {
  std::vector<RunResult> out(experiments.size());
  std::vector<std::exception_ptr> errors(experiments.size());
  tbb::parallel_for(std::size_t{0}, experiments.size(), [&](std::size_t i) {
    try {
      out[i] = replay(*experiments[i], options, csv_path);
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (progress) progress->done_one();
  });
  if (progress) progress->finish();
  for (const auto& err : errors) {
    if (err) std::rethrow_exception(err);
  }
  return out;
}

}  // namespace servesim::sim2real
