// plan CONFIG --gpus G1,G2… --slo METRIC=BOUND… [--tp 1,2,4,8] [--max-gpus N] [--vary KEY=VALUES]
//      [--bands [--band-draws N] [--error-model FILE]]
// The cheapest fleet (GPU kind, TP degree, replica count, settings) whose simulated metrics meet
// every SLO. See tools/README.md#plan.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "run/bands.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/stop_signals.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/plan/plan.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "servesim: find the fleet of least cost (GPUs, power) whose simulated metrics meet SLOs "
      "(see tools/README.md#plan)"};
  servesim::decide::PlanOptions o;
  app.add_option("config", o.config,
                 "Run configuration (YAML): the workload and serving setup; its one replica "
                 "group is replaced by each fleet tried")
      ->required();
  app.add_option("--gpus", o.gpus, "GPU kinds to consider (catalog names or aliases)")
      ->delimiter(',')
      ->required();
  app.add_option("--tp", o.tps, "Tensor-parallel degrees to consider (default 1,2,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  app.add_option("--max-gpus", o.max_gpus, "GPUs in one fleet at the most (default 16)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--slo", o.slos,
                 "METRIC=BOUND (upper), METRIC<=BOUND or METRIC>=BOUND, one value each; the "
                 "fleet's means over the seeds must meet all (repeatable)")
      ->required();
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
