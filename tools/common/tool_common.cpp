#include "tools/common/tool_common.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_invoke.h>
#include <unistd.h>

#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/registry.hpp"
#include "schedulers/registry.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/memory_planner.hpp"
#include "sim/output/metrics.hpp"
#include "sim/output/output_writers.hpp"
#include "sim/output/steady_state_window.hpp"
#include "sim/util/fnv_hash.hpp"
#include "sim/util/version.hpp"
#include "workloads/registry.hpp"

namespace servesim {
namespace fs = std::filesystem;

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          std::optional<std::uint64_t> seed) {
  std::vector<ConfigOverride> flagged;
  for (const auto& o : overrides) flagged.push_back({"--set", o});
  return load_run_config(path, flagged, seed);
}

RunConfig load_run_config(const std::string& path, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed) {
  ConfigNode root = ConfigNode::load_file(path);
  for (const auto& o : overrides) root.apply_override(o.assignment, o.flag);
  return RunConfig::parse(root, seed);
}

namespace {

// splitmix64: independent streams for the parts of a run from one seed.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::shared_ptr<Catalog> RunCache::catalog(const std::vector<std::string>& dirs) {
  const std::lock_guard lock(mutex_);
  auto& entry = catalogs_[dirs];
  if (!entry) entry = std::make_shared<Catalog>(dirs);
  return entry;
}

std::shared_ptr<const CostModel> RunCache::cost_model(const ConfigNode& node,
                                                      const std::vector<std::string>& dirs) {
  // The file matters beside the text: relative paths in the section resolve against its folder.
  std::string key = fmt::format("{}\n{}\n{}", fmt::join(dirs, "\n"), node.file(), node.dump());
  const std::lock_guard lock(mutex_);
  auto& entry = cost_models_[key];
  if (!entry) entry = make_cost_model(node);
  return entry;
}

std::string RunCache::file_hash(const std::string& path) {
  {
    const std::lock_guard lock(mutex_);
    if (auto it = file_hashes_.find(path); it != file_hashes_.end()) return it->second;
  }
  std::string h = file_fnv1a64(path);  // outside the lock: a large trace takes a while
  const std::lock_guard lock(mutex_);
  return file_hashes_.emplace(path, std::move(h)).first->second;
}

std::string resolved_config_yaml(const RunConfig& config) {
  YAML::Node doc = YAML::Clone(config.root.yaml());
  doc["name"] = config.name;
  doc["seed"] = config.seed;
  doc["config_dir"] = absolute_path(config.root.base_dir());
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

BuiltRun build_run(const RunConfig& config, RunCache* cache) {
  BuiltRun run;
  run.config = config;
  std::vector<std::string> dirs = config.catalog_dirs;
  for (const auto& d : Catalog::default_dirs()) dirs.push_back(d);
  run.catalog = cache ? cache->catalog(dirs) : std::make_shared<Catalog>(dirs);
  SchedulerOptions base_options = parse_scheduler_options(config.scheduler);
  // The serving engine's own semantics (an analytical cost model's engine profile: CUDA-graph
  // mode, async scheduling) hold wherever the config does not set them itself.
  const std::shared_ptr<const EngineProfile> engine =
      EngineProfile::of_cost_model(config.cost_model);
  if (engine && engine->async_scheduling && chunked_prefill(config.scheduler, base_options) &&
      !config.scheduler.has("async_scheduling")) {
    base_options.async_scheduling = *engine->async_scheduling;
  }
  ReplicaId next_id = 0;
  for (const auto& g : config.replicas) {
    ReplicaSpec spec;
    spec.gpu = &run.catalog->gpu(g.gpu, g.node.at("gpu"));
    spec.model = &run.catalog->model(
        g.model, g.node.has("model") ? g.node.at("model") : config.root.at("model"));
    spec.tp = g.tp;
    spec.pp = g.pp;
    spec.weights = g.weights;
    spec.cuda_graphs = g.cuda_graphs;
    spec.cuda_graph_mode = g.cuda_graph_mode;
    spec.cuda_graph_max_tokens = g.cuda_graph_max_tokens;
    EngineProfile::default_graph_launch(engine.get(), g.node.has("cuda_graph_mode"),
                                        g.node.has("cuda_graph_max_tokens"),
                                        base_options.max_num_seqs, spec);
    spec.power_cap_w = g.power_cap_w;
    spec.topology = g.topology;  // "" = the GPU's own links
    if (const std::string why = spec.gpu->topology_problem(spec.links()); !why.empty()) {
      g.node.at("topology").fail(why);
    }
    if (spec.weights == Precision::kFp8 && spec.gpu->fp8_tflops <= 0) {
      g.node.at("precision").fail(fmt::format("GPU '{}' has no FP8 tensor cores", spec.gpu->name));
    }
    if (const std::string why = spec.model->tp_problem(spec.tp); !why.empty()) {
      g.node.at("tp").fail("tp = " + why);
    }
    if (const std::string why = spec.model->pp_problem(spec.pp); !why.empty()) {
      g.node.at("pp").fail(why);
    }
    spec.cluster = config.cluster;
    if (const std::string why = spec.cluster.stage_placement_problem(spec.tp, spec.pp);
        !why.empty()) {
      g.node.at("tp").fail(why);
    }
    if (g.power_cap_w > 0) {
      if (const std::string why = spec.gpu->power_cap_problem(g.power_cap_w); !why.empty()) {
        g.node.at("power_cap_w").fail(why);
      }
    }
    SchedulerOptions options = base_options;
    if (options.max_model_len <= 0) options.max_model_len = spec.model->max_position_embeddings;
    if (spec.model->max_position_embeddings > 0 &&
        options.max_model_len > spec.model->max_position_embeddings) {
      // vLLM refuses to start; in a mixed fleet the router would send such contexts here.
      config.scheduler.at("max_model_len")
          .fail(fmt::format("{} is longer than {}'s context ({} tokens, max_position_embeddings)",
                            options.max_model_len, spec.model->name,
                            spec.model->max_position_embeddings));
    }
    const bool chunked = chunked_prefill(config.scheduler, options);
    if (!chunked && options.max_num_batched_tokens > 0 &&
        options.max_num_batched_tokens < options.max_model_len &&
        !config.scheduler.has("max_model_len")) {
      // Without chunking a prompt must fit one iteration: cap the model length at the budget.
      options.max_model_len = options.max_num_batched_tokens;
    }
    if (!chunked && options.max_num_batched_tokens > 0 &&
        options.max_num_batched_tokens < options.max_model_len) {
      config.scheduler.fail(fmt::format(
          "max_num_batched_tokens ({}) must be ≥ max_model_len ({}) without chunked prefill",
          options.max_num_batched_tokens, options.max_model_len));
    }
    std::unique_ptr<ReplicaScheduler> first = make_replica_scheduler(config.scheduler, options);
    if (first->token_budget() < options.max_num_seqs) {
      // vLLM refuses to start: a full batch of decodes would not fit one iteration's budget.
      // Blame the key the user wrote (the budget's, else max_num_seqs).
      const char* budget_key =
          config.scheduler.has("chunk_size") ? "chunk_size" : "max_num_batched_tokens";
      const ConfigNode at = config.scheduler.has(budget_key) ? config.scheduler.at(budget_key)
                            : config.scheduler.has("max_num_seqs")
                                ? config.scheduler.at("max_num_seqs")
                                : config.scheduler;
      at.fail(fmt::format("{} ({}{}) must be ≥ max_num_seqs ({}), as vLLM requires", budget_key,
                          first->token_budget(),
                          options.max_num_batched_tokens > 0 ? "" : ", the kind's default",
                          options.max_num_seqs));
    }
    std::int64_t blocks = options.num_gpu_blocks;
    if (blocks <= 0) {
      // Activations are reserved for the budget the scheduler will really use (its default when
      // the config gives none: sarathi 512, chunked vllm 2048, whole prompts otherwise).
      const MemoryPlan plan =
          plan_kv_memory(spec, options.gpu_memory_utilization, options.block_size,
                         first->token_budget(), options.max_num_seqs);
      if (plan.num_blocks <= 0) {
        constexpr double kGiB = 1073741824.0;
        g.node.fail(fmt::format(
            "{} does not fit on {} × {} (tp {}, pp {}): weights {:.1f} GiB + activations "
            "{:.1f} GiB per GPU{} leave no room for one KV block in {:.1f} GiB × utilization {} "
            "(expected more GPUs, fp8 weights, a higher gpu_memory_utilization or a smaller "
            "token budget)",
            spec.model->name, g.tp * g.pp, spec.gpu->name, g.tp, g.pp, plan.weight_bytes / kGiB,
            plan.activation_bytes / kGiB,
            g.pp > 1 ? fmt::format(" of pipeline stage {} of {}", plan.stage + 1, g.pp)
                     : std::string(),
            plan.gpu_bytes / kGiB, options.gpu_memory_utilization));
      }
      blocks = plan.num_blocks;
    }
    if (blocks * options.block_size < options.max_model_len) {
      // vLLM refuses to start when one request of max_model_len could not fit the KV cache.
      const ConfigNode at =
          config.scheduler.has("max_model_len") ? config.scheduler.at("max_model_len") : g.node;
      at.fail(fmt::format(
          "max_model_len {} does not fit {}'s KV cache on {} × {} ({} blocks of {} = {} tokens), "
          "as vLLM refuses (expected a smaller max_model_len, more GPUs or more memory)",
          options.max_model_len, spec.model->name, g.tp * g.pp, spec.gpu->name, blocks,
          options.block_size, blocks * options.block_size));
    }
    for (int i = 0; i < g.count; ++i) {
      auto scheduler =
          i == 0 ? std::move(first) : make_replica_scheduler(config.scheduler, options);
      KvCache kv(blocks, options.block_size, options.watermark);
      kv.set_prefix_caching(options.enable_prefix_caching);
      run.fleet.push_back(std::make_unique<Replica>(next_id++, spec, std::move(scheduler), kv,
                                                    options.max_model_len));
      run.fleet.back()->role = g.role;
      if (g.batches_in_flight > 0) run.fleet.back()->max_in_flight = g.batches_in_flight;
    }
  }
  run.router = make_router(config.router, derive_seed(config.seed, 1));
  if (config.disaggregated()) {
    if (config.scheduler.get_string("kind") == "orca") {
      config.scheduler.at("kind").fail(
          "orca reserves each request's whole KV at admission and cannot hand a prefill off or "
          "take one in (expected kind vllm, sarathi or edf in a disaggregated fleet)");
    }
    run.decode_router = make_decode_router(config.decode_router, derive_seed(config.seed, 3));
  }
  if (run.router->queue() != nullptr && !chunked_prefill(config.scheduler, base_options)) {
    config.router.at("kind").fail(
        "replicas pull from the global queue as vLLM V1's chunked-prefill scheduler admits "
        "(expected scheduler kind sarathi or edf, or vllm with enable_chunked_prefill: true)");
  }
  run.cost_model = cache ? cache->cost_model(config.cost_model, dirs)
                         : std::shared_ptr<const CostModel>(make_cost_model(config.cost_model));
  for (const auto& g : config.replicas) {
    if (const std::string why = run.cost_model->power_cap_problem(g.power_cap_w); !why.empty()) {
      g.node.at("power_cap_w").fail(why + " (expected cost_model kind analytical, or no cap)");
    }
  }
  run.workload = make_workload(config.workload, derive_seed(config.seed, 0));
  std::vector<std::string> classes;
  if (config.slo.named()) {
    for (const SloClass& c : config.slo.classes()) classes.push_back(c.name);
  }
  run.workload->set_slo_classes(classes);
  return run;
}

namespace {

// The metrics summary of `config` run with every step time × `scale` (no outputs).
nlohmann::json scaled_summary(const RunConfig& config, double scale, RunCache* cache) {
  BuiltRun run = build_run(config, cache);
  const ScaledCostModel scaled(*run.cost_model, scale);
  MetricsCollector metrics(run.config.slo, scaled.request_overhead_ns());
  Engine engine(run.fleet, *run.router, *run.workload, scaled, {&metrics});
  if (run.decode_router) engine.set_disaggregation(*run.decode_router, run.config.cluster);
  engine.set_slo(&run.config.slo, scaled.request_overhead_ns(), derive_seed(config.seed, 2));
  const EngineTotals totals = engine.run();
  return metrics.summary(totals, run.fleet, engine.network());
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
  return s;
}

}  // namespace

namespace {

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
                   {"validated", r->spec.gpu->validated}});
  }
  return out;
}

}  // namespace

nlohmann::json execute_run(BuiltRun& run, const RunOptions& options) {
  MetricsCollector metrics(run.config.slo, run.cost_model->request_overhead_ns());
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
  Engine engine(run.fleet, *run.router, *run.workload, *run.cost_model, observers);
  if (run.decode_router) engine.set_disaggregation(*run.decode_router, run.config.cluster);
  engine.set_stop(options.stop);
  engine.set_slo(&run.config.slo, run.cost_model->request_overhead_ns(),
                 derive_seed(run.config.seed, 2));
  const auto wall_start = std::chrono::steady_clock::now();
  if (options.progress) {
    const std::optional<std::int64_t> total = run.workload->expected_requests();
    engine.set_progress([wall_start, total](const EngineTotals& t, SimTime now) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      const std::int64_t done = t.finished + t.rejected;
      std::string line = fmt::format("\r  {:>10} requests done", done);
      if (total && *total > 0) {
        const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(*total));
        line = fmt::format("\r  {:>10} / {} requests ({:.0f}%)", done, *total, 100 * f);
        if (f > 0) line += fmt::format("  ETA {:.1f} s", wall / f - wall);
      }
      std::cerr << line << fmt::format("  sim {:.1f} s  wall {:.1f} s ", sim_to_s(now), wall)
                << std::flush;
    });
  }
  const EngineTotals totals = engine.run();
  if (options.progress) std::cerr << "\n";
  const nlohmann::json metrics_summary = metrics.summary(totals, run.fleet, engine.network());
  nlohmann::json sensitivity;
  if (options.sensitivity_delta > 0 && totals.complete) {
    sensitivity = step_time_sensitivity(run.config, metrics_summary, options.sensitivity_delta,
                                        options.cache);
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
  if (!sensitivity.is_null()) summary["sensitivity"] = sensitivity;
  if (window) summary["steady_state"] = window->summary();
  if (writers) {
    summary["outputs"] = writers->close();
    writers->commit(
        "# The config this run ran with; `simulate config.yaml` reruns it.\n" + config_yaml,
        summary.dump(2) + "\n");
    summary["outputs"]["dir"] = dir;
  }
  return summary;
}

namespace {
// A number of summary.json as text with `decimals` decimals (× scale), or "n/a" where it is null
// (a statistic of no values).
std::string number_or_na(const nlohmann::json& v, int decimals, double scale = 1) {
  return v.is_null() ? std::string("n/a")
                     : fmt::format("{:.{}f}", scale * v.get<double>(), decimals);
}
}  // namespace

std::string format_summary_table(const nlohmann::json& s) {
  std::string out;
  const auto& req = s["requests"];
  out += fmt::format("{} — cost model {}, workload {}, seed {}\n", s["name"].get<std::string>(),
                     s["cost_model"].get<std::string>(), s["workload"].get<std::string>(),
                     s["seed"].get<std::uint64_t>());
  out += fmt::format(
      "requests   arrived {}  finished {}  rejected {}  preemptions {}{}\n",
      req["arrived"].get<std::int64_t>(), req["finished"].get<std::int64_t>(),
      req["rejected"].get<std::int64_t>(), req["preemptions"].get<std::int64_t>(),
      req.value("unfinished", std::int64_t{0}) > 0
          ? fmt::format("  unfinished {} (stopped early)", req["unfinished"].get<std::int64_t>())
          : std::string());
  out += fmt::format("makespan   {:.2f} s   throughput {:.2f} req/s  {:.1f} output tok/s\n",
                     s["makespan_s"].get<double>(), s["throughput"]["requests_per_s"].get<double>(),
                     s["throughput"]["output_tokens_per_s"].get<double>());
  out += fmt::format("{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "latency (ms)", "mean", "p50",
                     "p90", "p95", "p99", "max");
  for (const char* k : {"ttft", "tbt", "tpot", "e2e", "scheduling_delay"}) {
    const auto& m = s["latency_ms"][k];
    out +=
        fmt::format("{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", k, number_or_na(m["mean"], 2),
                    number_or_na(m["p50"], 2), number_or_na(m["p90"], 2), number_or_na(m["p95"], 2),
                    number_or_na(m["p99"], 2), number_or_na(m["max"], 2));
  }
  if (!s["slo"].is_null()) {
    out += fmt::format("SLO        attainment {:.2f}%   goodput {:.2f} req/s\n",
                       100.0 * s["slo"]["attainment"].get<double>(),
                       s["slo"]["goodput_requests_per_s"].get<double>());
  }
  if (!s["energy_j"].is_null()) {
    out += fmt::format(
        "energy     {:.1f} kJ   {:.3f} J/output token   fleet power mean {:.0f} W  peak {:.0f} W\n",
        s["energy_j"].get<double>() / 1e3, s["energy_j_per_output_token"].get<double>(),
        s["power_w"]["mean"].get<double>(), s["power_w"]["peak"].get<double>());
  }
  if (s.contains("steady_state")) {
    const auto& w = s["steady_state"];
    out += fmt::format(
        "steady     {:.1f} s window ({} seats): {} output tok/s  ITL p50 {} p90 {} ms  power {} W  "
        "{} J/output token  batch {}\n",
        w["window_s"].get<double>(), w["seats"].get<std::int64_t>(),
        number_or_na(w["output_tok_s"], 0), number_or_na(w["itl_p50_ms"], 2),
        number_or_na(w["itl_p90_ms"], 2), number_or_na(w["power_w"], 0),
        number_or_na(w["j_per_token"], 3), number_or_na(w["avg_batch"], 1));
  }
  if (s.contains("sensitivity")) {
    const auto& v = s["sensitivity"];
    const auto& g = v["gain"];
    out += fmt::format(
        "sensitivity step times ±{:g}%: % change per 1% step-time error: ttft mean {} p99 "
        "{}, tpot mean {}, e2e mean {} p99 {}\n",
        v["delta_pct"].get<double>(), number_or_na(g["ttft"]["mean"], 1),
        number_or_na(g["ttft"]["p99"], 1), number_or_na(g["tpot"]["mean"], 1),
        number_or_na(g["e2e"]["mean"], 1), number_or_na(g["e2e"]["p99"], 1));
    if (v.contains("slo_attainment")) {
      const auto& a = v["slo_attainment"];
      out += fmt::format("           SLO attainment {:.2f}% at +{:g}%, {:.2f}% at -{:g}%\n",
                         100.0 * a["up"].get<double>(), v["delta_pct"].get<double>(),
                         100.0 * a["down"].get<double>(), v["delta_pct"].get<double>());
    }
  }
  if (s.contains("workload_counts")) {
    const auto& c = s["workload_counts"];
    std::vector<std::string> parts;
    auto add = [&](const char* key, const char* what) {
      const auto n = c[key].get<std::int64_t>();
      if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
    };
    add("zero_prompt_rows_raised_to_1", "rows with prompt 0 raised to 1");
    add("zero_output_rows_raised_to_1", "rows with output 0 raised to 1");
    add("error_rows", "has_error rows replayed");
    add("clipped_to_max_tokens", "requests clipped to max_tokens");
    if (!parts.empty()) out += fmt::format("workload   {}\n", fmt::join(parts, ", "));
  }
  for (const auto& p : s.value("provenance", nlohmann::json::array())) {
    const auto& v = p["validated"];
    std::string checked =
        v.empty() ? std::string("nothing measured on this GPU") : v[0].get<std::string>();
    if (v.size() > 1) checked += fmt::format(" (+{} more in summary.json)", v.size() - 1);
    out += fmt::format("prices     {}: {}; validated: {}\n", p["gpu"].get<std::string>(),
                       p["constants"].get<std::string>().empty()
                           ? std::string("no provenance in its hardware file")
                           : p["constants"].get<std::string>(),
                       checked);
  }
  for (const auto& r : s["replicas"]) {
    const int pp = r["pp"].get<int>();
    out +=
        fmt::format("replica {:<3} {:<10} tp{}{} {:<8} kv {:>7} blocks  steps {:>8}  busy {:.1f}%",
                    r["id"].get<int>(), r["gpu"].get<std::string>(), r["tp"].get<int>(),
                    pp > 1 ? fmt::format(" pp{}", pp) : "", r["scheduler"].get<std::string>(),
                    r["kv_blocks"].get<std::int64_t>(), r["steps"].get<std::int64_t>(),
                    100.0 * r["busy_fraction"].get<double>());
    if (r.contains("prefix_cache")) {
      const auto& p = r["prefix_cache"];
      const std::string rate = number_or_na(p["hit_rate"], 1, 100);
      out += fmt::format("  prefix hits {}{} of {} blocks, {} evicted", rate,
                         p["hit_rate"].is_null() ? "" : "%", p["query_blocks"].get<std::int64_t>(),
                         p["evicted_blocks"].get<std::int64_t>());
    }
    out += "\n";
  }
  if (s.contains("outputs")) {
    out += fmt::format("outputs    {}/\n", s["outputs"]["dir"].get<std::string>());
    for (const auto& n : s["outputs"]["notes"]) out += "note       " + n.get<std::string>() + "\n";
  }
  return out;
}

CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = fmt::format("a whole number in [{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < lo ||
            v > hi) {
          return fmt::format("'{}' is not {}", text, range);
        }
        return "";
      },
      range);
}

CLI::Validator number_in(double lo, double hi) {
  const std::string range = fmt::format("a number in [{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
            !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("'{}' is not {}", text, range);
        }
        return "";
      },
      range);
}

CLI::Validator nonblank(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t") != std::string::npos) return "";
        return "expected " + what + ", got nothing";
      },
      what);
}

namespace {
// Every tool and subcommand's --help ends with the exit codes.
void add_exit_codes(CLI::App& app) {
  app.footer(
      "Exit codes: 0 ok; 1 bad input (the message names file:line:col, the CSV line or the "
      "flag, and what was expected); 2 usage error; 3 internal error (a bug: please report it).");
  for (CLI::App* sub : app.get_subcommands({})) add_exit_codes(*sub);
}
}  // namespace

int tool_main(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  add_exit_codes(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return guarded_main(body);
}

namespace {
// Ends a failed run with its documented exit code. The output writers have closed or removed their
// files while the error unwound; exit handlers are skipped because HDF5's crash (exit 139) when a
// file it failed to close, e.g. on a full disk, is still in its tables.
[[noreturn]] void fail_exit(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(code);
}
}  // namespace

namespace {
std::atomic<bool> stop_requested{false};
volatile std::sig_atomic_t stop_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  stop_signal = sig;
  stop_requested.store(true, std::memory_order_relaxed);
}
}  // namespace

const std::atomic<bool>* stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes its default action: ends the process
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &stop_requested;
}

int received_stop_signal() { return stop_signal; }

int guarded_main(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    fail_exit(1);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    fail_exit(3);
  }
}

}  // namespace servesim
