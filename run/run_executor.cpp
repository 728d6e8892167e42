#include "run/run_executor.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <tbb/parallel_invoke.h>

#include "run/autoscaling_summary.hpp"
#include "run/bands.hpp"
#include "run/lora_setup.hpp"
#include "run/run_config_loader.hpp"
#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/output_writers.hpp"
#include "sim/output/steady_state_window.hpp"
#include "sim/util/fnv_hash.hpp"
#include "sim/util/version.hpp"
#include "workloads/closed_loop_base.hpp"
#include "workloads/registry.hpp"

namespace servesim {
namespace fs = std::filesystem;

namespace {

// summary["speculative"]: what speculative decoding did over the run. The mean acceptance length
// is vLLM's (1 + accepted drafts per verify); tokens per decode step counts every decode step
// of the run's requests, the plain ones at the end of an output included.
nlohmann::json speculative_summary(const Speculation& s, const EngineTotals& t,
                                   const nlohmann::json& metrics) {
  const SpeculativeConfig& c = s.config();
  const auto steps = static_cast<double>(t.spec_steps);
  const std::int64_t output = metrics["requests"]["output_tokens"].get<std::int64_t>();
  const std::int64_t finished = metrics["requests"]["finished"].get<std::int64_t>();
  // Each finished request's first token comes from its prefill; each decode step emits
  // 1 + its accepted drafts.
  const std::int64_t after_first = output - finished;
  const std::int64_t decode_steps = after_first - t.spec_accepted;
  const auto ratio = [](double a, double b) {
    return b > 0 ? nlohmann::json(a / b) : nlohmann::json(nullptr);
  };
  return {{"method", speculative_method_name(c.method)},
          {"num_speculative_tokens", c.num_speculative_tokens},
          {"expected_acceptance_length", 1 + c.expected_accepted(c.num_speculative_tokens)},
          {"verify_steps", t.spec_steps},
          {"drafted_tokens", t.spec_drafted},
          {"accepted_tokens", t.spec_accepted},
          {"acceptance_rate",
           ratio(static_cast<double>(t.spec_accepted), static_cast<double>(t.spec_drafted))},
          {"mean_acceptance_length", ratio(steps + static_cast<double>(t.spec_accepted), steps)},
          {"tokens_per_decode_step",
           ratio(static_cast<double>(after_first), static_cast<double>(decode_steps))}};
}

// The metrics summary of `config` run with every step time × `scale` (no outputs).
nlohmann::json scaled_summary(const RunConfig& config, double scale, RunCache* cache) {
  Simulation sim(config, cache);
  const ScaledCostModel scaled(sim.cost_model(), scale);
  MetricsCollector metrics = sim.metrics(scaled);
  const EngineTotals totals = sim.run({.cost_model = &scaled, .observers = {&metrics}});
  return metrics.summary(totals, sim.fleet(), sim.network());
}

// summary["sensitivity"]: how far the answer moves when every step time is off by ±delta.
// gain = (x(+delta) − x(−delta)) / x / (2 delta) per latency statistic: a 1% step-time error
// moves x by about gain %; SLO attainment is given at both ends.
nlohmann::json step_time_sensitivity(const RunConfig& config, const nlohmann::json& base,
                                     double delta, RunCache* cache) {
  nlohmann::json up, down;
  tbb::parallel_invoke([&] { up = scaled_summary(config, 1 + delta, cache); },
                       [&] { down = scaled_summary(config, 1 - delta, cache); });
  nlohmann::json s;
  s["delta_pct"] = delta * 100;
  for (const auto& [metric, stats] : base["latency_ms"].items()) {
    for (const char* stat : {"mean", "p50", "p90", "p99"}) {
      const auto& x = stats[stat];
      const auto& hi = up["latency_ms"][metric][stat];
      const auto& lo = down["latency_ms"][metric][stat];
      if (x.is_null() || hi.is_null() || lo.is_null() || x.get<double>() <= 0) {
        s["gain"][metric][stat] = nullptr;  // no values (or no time) to move
        continue;
      }
      s["gain"][metric][stat] =
          (hi.get<double>() - lo.get<double>()) / x.get<double>() / (2 * delta);
    }
  }
  if (!base["slo"].is_null()) {
    s["slo_attainment"] = {{"base", base["slo"]["attainment"]},
                           {"up", up["slo"]["attainment"]},
                           {"down", down["slo"]["attainment"]}};
  }
  if (auto w = near_capacity_warning(s); !w.is_null()) s["warning"] = w;
  return s;
}

// The files a run read, each with its FNV-1a 64 hash: the hardware and model files of its
// replicas and the workload's trace or length file, so two results can be told apart by their
// inputs as well as their config.
nlohmann::json input_files(const BuiltRun& run, RunCache* cache) {
  nlohmann::json files = nlohmann::json::array();
  std::vector<std::string> seen;
  auto add = [&](const char* kind, const std::string& name, const std::string& path) {
    if (path.empty() || std::find(seen.begin(), seen.end(), path) != seen.end()) return;
    seen.push_back(path);
    files.push_back({{"kind", kind},
                     {"name", name},
                     {"file", path},
                     {"fnv1a64", cache ? cache->file_hash(path) : file_fnv1a64(path)}});
  };
  for (const auto& r : run.fleet) add("hardware", r->spec.gpu->name, r->spec.gpu->file.file());
  for (const auto& r : run.fleet) add("model", r->spec.model->name, r->spec.model->file.file());
  for (const char* section : {"trace", "lengths"}) {
    const auto node = run.config.workload.find(section);
    if (!node || !node->is_map() || !node->has("file")) continue;
    fs::path p(node->get_string("file"));
    if (p.is_relative()) p = fs::path(node->base_dir()) / p;
    add(section, p.filename().string(), absolute_path(p));
  }
  return files;
}

// Where the constants pricing each GPU come from and what they were checked against (the
// hardware files' `provenance:`), for cost models that use them; [] for the others.
nlohmann::json price_provenance(const BuiltRun& run) {
  nlohmann::json out = nlohmann::json::array();
  const std::string_view kind = run.cost_model->name();
  if (kind != "analytical" && kind != "rf" && kind != "rf_scaled") return out;
  std::vector<const GpuSpec*> seen;
  for (const auto& r : run.fleet) {
    if (std::find(seen.begin(), seen.end(), r->spec.gpu) != seen.end()) continue;
    seen.push_back(r->spec.gpu);
    out.push_back({{"gpu", r->spec.gpu->name},
                   {"constants", r->spec.gpu->provenance},
                   {"validated", r->spec.gpu->validated},
                   {"arch", r->spec.gpu->arch},
                   {"memory_type", r->spec.gpu->memory_type},
                   {"class_checked_on", run.catalog->class_checked_on(*r->spec.gpu)}});
  }
  return out;
}

}  // namespace

nlohmann::json execute_run(Simulation& sim, const RunOptions& options) {
  const BuiltRun& run = sim.built();
  MetricsCollector metrics = sim.metrics(sim.cost_model());
  std::vector<RunObserver*> observers{&metrics};
  std::optional<SteadyStateWindow> window;
  if (run.config.output.steady_state) {
    std::int64_t seats = 0;  // the benchmark's concurrency: every replica's max_num_seqs
    for (const auto& r : run.fleet) seats += r->scheduler->seat_limit();
    window.emplace(seats);
    observers.push_back(&*window);
  }
  std::unique_ptr<OutputWriters> writers;
  std::string dir = options.out_dir;
  if (dir.empty()) dir = run.config.output.dir;
  if (dir.empty()) dir = (fs::path("out") / run.config.name).string();
  if (options.write_outputs) {
    writers = std::make_unique<OutputWriters>(dir, run.config.output, run.fleet);
    observers.push_back(writers.get());
  }
  observers.insert(observers.end(), options.observers.begin(), options.observers.end());
  const auto wall_start = std::chrono::steady_clock::now();
  Engine::Progress progress_line;
  if (options.progress) {
    std::ostream& progress = *options.progress;
    const std::optional<std::int64_t> total = run.workload->expected_requests();
    progress_line = [wall_start, total, &progress](const EngineTotals& t, SimTime now) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      const std::int64_t done = t.finished + t.rejected;
      std::string line = fmt::format("\r  {:>10} requests done", done);
      if (total && *total > 0) {
        const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(*total));
        line = fmt::format("\r  {:>10} / {} requests ({:.0f}%)", done, *total, 100 * f);
        if (f > 0) line += fmt::format("  ETA {:.1f} s", wall / f - wall);
      }
      progress << line << fmt::format("  sim {:.1f} s  wall {:.1f} s ", sim_to_s(now), wall)
               << std::flush;
    };
  }
  Engine::Progress on_progress;
  if (progress_line && options.on_progress) {
    on_progress = [&progress_line, &options](const EngineTotals& t, SimTime now) {
      progress_line(t, now);
      options.on_progress(t, now);
    };
  } else if (progress_line) {
    on_progress = std::move(progress_line);
  } else if (options.on_progress) {
    on_progress = options.on_progress;
  }
  const EngineTotals totals = sim.run({.observers = std::move(observers),
                                       .stop = options.stop,
                                       .progress = std::move(on_progress)});
  if (options.progress) *options.progress << "\n";
  const nlohmann::json metrics_summary = metrics.summary(totals, run.fleet, sim.network());
  nlohmann::json sensitivity;
  if (options.sensitivity_delta > 0 && totals.complete) {
    sensitivity = step_time_sensitivity(run.config, metrics_summary, options.sensitivity_delta,
                                        options.cache);
  }
  nlohmann::json bands;
  if (options.error_model && totals.complete) {
    const BandPlan plan = plan_bands(run, *options.error_model, options.band_draws);
    std::vector<nlohmann::json> draws = run_band_draws(run.config, plan, options.cache);
    bands = band_summary(metrics_summary, plan, draws, options.error_model->file());
    if (options.band_draw_summaries) *options.band_draw_summaries = std::move(draws);
  }
  nlohmann::json summary;
  summary["name"] = run.config.name;
  summary["seed"] = run.config.seed;
  summary["servesim_version"] = std::string(servesim_version());
  // false: stopped by a signal; the outputs hold the requests simulated until then.
  summary["complete"] = totals.complete;
  const std::string config_yaml = resolved_config_yaml(run.config);
  summary["config"] = ConfigNode::parse(config_yaml, "config.yaml").to_json();
  summary["inputs"] = input_files(run, options.cache);
  summary["provenance"] = price_provenance(run);
  summary["cost_model"] = std::string(run.cost_model->name());
  summary["workload"] = std::string(run.workload->name());
  for (const auto& [k, v] : metrics_summary.items()) summary[k] = v;
  // What the workload changed in its input (nothing is silently adjusted): rows raised to one
  // token, has_error rows, requests clipped to max_tokens.
  const WorkloadCounts wc = workload_counts(*run.workload);
  summary["workload_counts"] = {{"yielded", wc.yielded},
                                {"zero_prompt_rows_raised_to_1", wc.zero_prompt_rows},
                                {"zero_output_rows_raised_to_1", wc.zero_output_rows},
                                {"error_rows", wc.error_rows},
                                {"clipped_to_max_tokens", wc.clipped_to_max_tokens}};
  if (wc.prompt_filter) {
    summary["workload_counts"]["left_out_by_prompt_tokens"] = wc.left_out_by_prompt_tokens;
  }
  if (const SessionCounts* sc = session_counts(*run.workload)) {
    summary["sessions"] = {{"started", sc->started},
                           {"completed", sc->completed},
                           {"cut_at_max_prompt", sc->cut_at_max_prompt},
                           {"ended_by_rejection", sc->ended_by_rejection},
                           {"requests_finished", sc->requests_finished},
                           {"requests_left_out", sc->requests_left_out},
                           {"mean_session_s", sc->mean_session_s()}};
  }
  if (!sensitivity.is_null()) summary["sensitivity"] = sensitivity;
  if (!bands.is_null()) summary["bands"] = bands;
  if (window) summary["steady_state"] = window->summary();
  if (run.autoscaler) summary["autoscaling"] = autoscaling_summary(*run.autoscaler, run);
  if (run.speculation)
    summary["speculative"] = speculative_summary(*run.speculation, totals, metrics_summary);
  if (run.config.lora) summary["lora"] = lora_summary(run.fleet, *run.config.lora);
  if (writers) {
    summary["outputs"] = writers->close();
    writers->commit(
        "# The config this run ran with; `simulate config.yaml` reruns it.\n" + config_yaml,
        summary.dump(2) + "\n");
    summary["outputs"]["dir"] = dir;
  }
  return summary;
}

}  // namespace servesim
