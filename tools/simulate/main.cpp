// simulate CONFIG [--set key.path=value]... [--out DIR] [--seed N] [--quiet] [--sensitivity PCT]
//          [--bands [--band-draws N] [--error-model FILE]] [--plot [--plot-format svg]]
// Runs one simulation and prints its summary table; writes summary.json, config.yaml,
// requests.h5, steps.h5, trace.json (and CSV for small runs) into the output folder.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "run/bands.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/stop_signals.hpp"
#include "tools/common/summary_table.hpp"
#include "tools/common/tool_main.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "servesim: simulate one LLM serving run (see configs/README.md for the config format)"};
  std::string config;
  std::vector<std::string> overrides;
  std::string out_dir;
  std::optional<std::uint64_t> seed;
  bool quiet = false;
  bool no_outputs = false;
  app.add_option("config", config, "Run configuration (YAML)")->required();
  app.add_option("--set", overrides, "Override a config key: key.path=value (repeatable)");
  app.add_option("--out", out_dir, "Output folder (default: output.dir or out/<name>)");
  app.add_option("--seed", seed, "Seed (overrides the config's seed), an integer ≥ 0")
      ->check(servesim::whole_number_in(0, UINT64_MAX));
  app.add_flag("--quiet,-q", quiet, "Print nothing but errors");
  auto* no_outputs_flag =
      app.add_flag("--no-outputs", no_outputs, "Write no files (summary table only)");
  bool plot = false;
  std::string plot_format = "png";
  app.add_flag("--plot", plot,
               "Draw latency CDFs (latency.png) and per-replica timelines (timeline.png) into the "
               "output folder with tools/plot.py")
      ->excludes(no_outputs_flag);
  app.add_option("--plot-format", plot_format, "png (default) or svg")
      ->check(CLI::IsMember({"png", "svg"}));
  double sensitivity_pct = 0;
  app.add_option("--sensitivity", sensitivity_pct,
                 "Run twice more with every step time +/- this many percent and report how far "
                 "each latency moves per 1% of step-time error (default 0: off)")
      ->check(servesim::number_in(0.0, 50.0));
  bool bands = false;
  int band_draws = 5;
  std::string error_model;
  app.add_flag("--bands", bands,
               "Rerun with step times drawn from the measured pricing error of the run's regime "
               "and state each latency, throughput and J/token as value [low, high]");
  app.add_option("--band-draws", band_draws,
                 "Draws of --bands (default 5: p10, p50, p90 and 2 "
                 "seeded)")
      ->check(CLI::Range(servesim::kMinBandDraws, servesim::kMaxBandDraws));
  app.add_option("--error-model", error_model,
                 "Error model of --bands (default data/measured/error_model.yaml)");
  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    const auto cfg = servesim::load_run_config(config, overrides, seed);
    servesim::Simulation sim(cfg);
    servesim::RunOptions options;
    options.out_dir = out_dir;
    options.write_outputs = !no_outputs;
    if (!quiet && isatty(STDERR_FILENO)) options.progress = &std::cerr;
    options.sensitivity_delta = sensitivity_pct / 100.0;
    options.stop = servesim::stop_on_signals();
    std::optional<servesim::ErrorModel> errors;
    if (bands || !error_model.empty()) {
      errors = servesim::ErrorModel::load(error_model.empty() ? servesim::ErrorModel::default_path()
                                                              : error_model);
      options.error_model = &*errors;
      options.band_draws = band_draws;
    }
    const auto summary = servesim::execute_run(sim, options);
    if (!quiet) std::cout << servesim::format_summary_table(summary);
    if (const int sig = servesim::received_stop_signal(); sig != 0) {
      // Exit status 128 + signal, as the shell reports a process the signal ended.
      std::cerr << fmt::format(
          "stopped by {}: the outputs hold the {} requests done so far (summary.json: "
          "\"complete\": "
          "false)\n",
          sig == SIGINT ? "SIGINT" : "SIGTERM",
          summary["requests"]["finished"].get<std::int64_t>() +
              summary["requests"]["rejected"].get<std::int64_t>());
      return 128 + sig;
    }
    if (plot) {
      const std::string dir = summary["outputs"]["dir"].get<std::string>();
      const std::string note =
          servesim::run_plot_script({"run", dir, "--format", plot_format}, std::cout);
      if (!note.empty()) std::cerr << "note: " << note << "\n";
      if (note.empty() && !quiet) {
        std::cout << fmt::format("plots      {0}/latency.{1}, {0}/timeline.{1}\n", dir,
                                 plot_format);
      }
    }
    return 0;
  });
}
