// plan CONFIG --gpus G1,G2… --slo METRIC=BOUND… [--tp 1,2,4,8] [--max-gpus N] [--vary KEY=VALUES]
//      [--bands [--band-draws N] [--error-model FILE]]
// The cheapest fleet (GPU kind, TP degree, replica count, settings) whose simulated metrics meet
// every SLO. See tools/README.md#plan.
// plan --layouts MODEL --system S [--isl N --osl N --max-gpus N --engines … --formats …]
// The deployments of a model on a system (aggregated or disaggregated, TP / EP / attention DP per
// pool, workers, concurrency) and their frontier of tokens/s per GPU against tokens/s per user.
#include <csignal>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include "run/bands.hpp"
#include "sim/config/input_error.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/stop_signals.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/plan/plan.hpp"
#include "tools/plan/plan_layouts.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "servesim: find the fleet of least cost (GPUs, power) whose simulated metrics meet SLOs "
      "(see tools/README.md#plan)"};
  servesim::decide::PlanOptions o;
  auto* config_opt = app.add_option("config", o.config,
                                    "Run configuration (YAML): the workload and serving setup; its "
                                    "one replica group is replaced by each fleet tried");
  auto* gpus_opt =
      app.add_option("--gpus", o.gpus, "GPU kinds to consider (catalog names or aliases)")
          ->delimiter(',');
  servesim::decide::LayoutPlanOptions layouts;
  auto* layouts_opt = app.add_option(
      "--layouts", layouts.query.model,
      "MODEL (catalog name or checkpoint path): search its deployments on --system instead, "
      "aggregated and disaggregated, and report their frontier of tokens/s per GPU against "
      "tokens/s per user (no CONFIG, --gpus or --slo)");
  layouts_opt->excludes(config_opt);
  app.add_option("--system", layouts.query.system,
                 "With --layouts: h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm or gb300")
      ->needs(layouts_opt);
  app.add_option("--isl", layouts.query.isl, "With --layouts: prompt length (default 1024)")
      ->needs(layouts_opt)
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--osl", layouts.query.osl, "With --layouts: output length (default 1024)")
      ->needs(layouts_opt)
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--engines", layouts.query.engines,
                 "With --layouts: engines to consider (default sglang,trtllm,vllm)")
      ->needs(layouts_opt)
      ->delimiter(',');
  app.add_option("--formats", layouts.formats,
                 "With --layouts: weight formats to consider (bf16, fp8, fp8_block, nvfp4, mxfp4, "
                 "int4; default fp8)")
      ->needs(layouts_opt)
      ->delimiter(',');
  std::string modes = "agg,disagg";
  app.add_option("--modes", modes, "With --layouts: agg, disagg or agg,disagg (default both)")
      ->needs(layouts_opt)
      ->check(CLI::IsMember({"agg", "disagg", "agg,disagg", "disagg,agg"}));
  app.add_option("--speeds", layouts.bounds,
                 "With --layouts: per-user speeds (tokens/s) to pick at (default "
                 "10,20,35,50,75,100,150,200)")
      ->needs(layouts_opt)
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--prompts-per-seat", layouts.prompts_per_seat,
                 "With --layouts: the client sends this many prompts per seat of its concurrency, "
                 "one seat's worth of warm-ups (default 10 and 2, InferenceX's client)")
      ->needs(layouts_opt)
      ->check(CLI::Range(1, 100));
  app.add_option("--max-ttft-ms", layouts.max_ttft_ms,
                 "With --layouts: a pick's mean TTFT at most this (default: no bound)")
      ->needs(layouts_opt)
      ->check(CLI::PositiveNumber);
  app.add_option("--tp", o.tps, "Tensor-parallel degrees to consider (default 1,2,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  app.add_option("--max-gpus", o.max_gpus,
                 "GPUs in one fleet (with --layouts: one deployment) at the most (default 16)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--slo", o.slos,
                 "METRIC=BOUND (upper), METRIC<=BOUND or METRIC>=BOUND, one value each; the "
                 "fleet's means over the seeds must meet all (repeatable)")
      ->excludes(layouts_opt);
  layouts_opt->excludes(gpus_opt);
  app.add_option("--objective", o.objective,
                 "cost (USD per hour, from the price file), gpus, or power (GPUs × cap)")
      ->check(CLI::IsMember({"cost", "gpus", "power"}));
  app.add_option("--prices", o.prices,
                 "Price file (default configs/prices/on-demand.yaml: source, currency, "
                 "usd_per_gpu_hour: {gpu: price}); none: only the --price flags");
  app.add_option("--price", o.price_overrides,
                 "GPU=USD_PER_HOUR: a price of your own, over the file's (repeatable)");
  app.add_option("--set", o.sets, "Override a key of the config: key.path=value (repeatable)");
  app.add_option("--vary", o.varies,
                 "KEY=VALUES (sweep's syntax): search these settings too, e.g. "
                 "scheduler.chunk_size=256,512,1024 (repeatable; their product)");
  app.add_option("--seeds", o.seeds, "Runs per fleet (seed, seed+1, …); the SLOs hold on means")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--exhaustive", o.exhaustive,
               "Simulate every replica count, not the monotone search (reports whether the "
               "metrics were monotone)");
  app.add_option("--threads", o.threads, "Threads (default: all cores)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--out", o.out_dir, "Output folder (default out/<name>/plan)")
      ->check(servesim::nonblank("a folder"));
  app.add_flag("--bands", o.bands,
               "Rerun the pick and each cheaper fleet under the error model's band draws and "
               "report in how many each meets (plan.json \"bands\")");
  app.add_option("--band-draws", o.band_draws, "Draws of --bands (default 5)")
      ->check(CLI::Range(servesim::kMinBandDraws, servesim::kMaxBandDraws));
  app.add_option("--error-model", o.error_model,
                 "Error model of --bands (default data/measured/error_model.yaml)");
  app.add_option("--split", o.split,
                 "THRESHOLDS: also plan two pools split by prompt length at each threshold "
                 "(tokens), each for its own requests, and pick the cheaper of split and one pool")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30));
  bool no_plots = false;
  app.add_flag("--no-plots", no_plots, "Make no plot (it needs python3-matplotlib)");
  app.add_flag("--quiet,-q", o.quiet, "Print nothing but errors");
  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    o.plots = !no_plots;
    if (!layouts.query.model.empty()) {
      if (layouts.query.system.empty()) {
        throw servesim::InputError("--layouts needs --system (the system to deploy on)");
      }
      layouts.query.max_gpus = o.max_gpus;
      layouts.query.aggregated = modes == "agg" || modes.find(',') != std::string::npos;
      layouts.query.disaggregated = modes != "agg";
      if (layouts.formats.empty()) layouts.formats = {"fp8"};
      layouts.out_dir = o.out_dir;
      layouts.quiet = o.quiet;
      std::optional<tbb::global_control> threads;
      if (o.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, o.threads);
      const servesim::decide::PlanReport report = servesim::decide::run_layout_plan(layouts);
      std::cout << report.text;
      if (o.plots) {
        const std::string note = servesim::run_plot_script({"layouts", report.dir}, std::cout);
        if (!note.empty()) std::cerr << "note: " << note << "\n";
      }
      return 0;
    }
    if (o.config.empty() || o.gpus.empty() || o.slos.empty()) {
      throw servesim::InputError("plan needs CONFIG, --gpus and --slo (or --layouts MODEL)");
    }
    if (!o.quiet && isatty(STDERR_FILENO)) o.progress = &std::cerr;
    o.stop = servesim::stop_on_signals();
    const servesim::decide::PlanReport report = servesim::decide::run_plan(o);
    std::cout << report.text;
    if (!report.complete) {
      const int sig = servesim::received_stop_signal();
      std::cerr << fmt::format(
          "stopped by {}: plan.json holds the search until then (\"complete\": false); {} "
          "run{} cut short or never started\n",
          sig == SIGTERM ? "SIGTERM" : "SIGINT", report.cut, report.cut == 1 ? " was" : "s were");
      return 128 + (sig == 0 ? SIGINT : sig);
    }
    if (o.plots) {
      const std::string note = servesim::run_plot_script({"plan", report.dir}, std::cout);
      if (!note.empty()) std::cerr << "note: " << note << "\n";
    }
    return 0;
  });
}
