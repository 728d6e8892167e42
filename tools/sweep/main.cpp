// sweep CONFIG --vary KEY=VALUES… [--slo …] [--pick …] [--max-rate KEY] [--threads N[,N…]] …
// Runs a grid of simulate runs in parallel (oneTBB; across machines under mpirun), picks the best
// point that meets SLOs, or finds the highest arrival rate that does. See tools/README.md.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "sim/config/input_error.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/stop_signals.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/sweep/shards.hpp"
#include "tools/sweep/study.hpp"

namespace {

// Prints what the sweep found (rank 0) and draws its pictures; returns the exit code.
int print_report(const servesim::sweep::SweepOptions& o,
                 const servesim::sweep::SweepReport& report) {
  if (!report.writer) return 0;
  if (!o.quiet) std::cout << report.tables;
  if (o.plots) {
    const std::string note = servesim::run_plot_script({report.plot_mode, report.dir}, std::cout);
    if (!note.empty()) std::cerr << "note: " << note << "\n";
  }
  if (!o.quiet) {
    std::cout << fmt::format("files      {}/\n", report.dir);
    std::cout << fmt::format(
        "wall       {} runs in {:.2f} s on {} thread{}{}\n", report.runs, report.wall_s,
        report.threads, report.threads == 1 ? "" : "s",
        report.ranks > 1 ? fmt::format(" × {} ranks", report.ranks) : std::string());
  }
  if (!report.complete) {
    const int sig = servesim::received_stop_signal();
    std::cerr << fmt::format(
        "stopped by {}: the files hold the runs done; {} run{} cut short or never started "
        "(empty metrics)\n",
        sig == SIGTERM ? "SIGTERM" : "SIGINT", report.cut, report.cut == 1 ? " was" : "s were");
    return 128 + (sig == 0 ? SIGINT : sig);
  }
  if (!report.identical) {
    std::cerr << "internal error: results differ between thread counts (see scaling.json)\n";
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using servesim::sweep::Shards;
  std::unique_ptr<Shards> shards;
  try {
    shards = std::make_unique<Shards>(argc, argv);
  } catch (const servesim::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  CLI::App app{
      "servesim: run a grid of simulations in parallel and pick the best point that meets SLOs "
      "(see tools/README.md)"};
  servesim::sweep::SweepOptions o;
  app.add_option("config", o.config, "Run configuration (YAML), as simulate takes it")->required();
  app.add_option("--set", o.sets, "Override a key for every point: key.path=value (repeatable)");
  app.add_option("--vary", o.varies,
                 "KEY=V1,V2,… | A..B:xF | A..B:+S | @FILE: a varied key (repeatable; the points "
                 "are their product)");
  app.add_flag("--zip", o.zip, "Pair the --vary lists element-wise instead of their product");
  app.add_option("--seeds", o.seeds,
                 "Run every point with N seeds (seed, seed+1, …) and report means and 95% CIs")
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "The first seed (default: the config's)")
      ->check(servesim::whole_number_in(0, UINT64_MAX));
  app.add_option("--threads", o.threads,
                 "Threads (default: all cores); a list (1,2,4) runs the sweep once per count and "
                 "reports the scaling")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--slo", o.slos,
                 "METRIC=BOUND (upper), METRIC<=BOUND or METRIC>=BOUND; a list of bounds "
                 "(tbt_p99_ms=25,50) picks once per bound (repeatable)");
  app.add_option("--pick", o.pick,
                 "max:NAME | min:NAME: the metric or varied key to optimise among the points "
                 "that meet every --slo");
  app.add_option("--throughput", o.throughput,
                 "The metric the picks' and baselines' throughput fractions are taken of "
                 "(default output_tok_s)");
  app.add_option("--baseline", o.baselines,
                 "KEY=VALUE[;KEY=VALUE…]: a static choice (a grid point) scored beside the pick "
                 "(repeatable)");
  app.add_option("--oracle", o.oracle,
                 "KEY=VALUE: run the grid again with this override (e.g. another cost model) and "
                 "score the picks on it (repeatable)");
  app.add_option("--max-rate", o.max_rate,
                 "KEY: per point, the highest value of this rate (workload.arrival.qps) that "
                 "meets every --slo, by bisection");
  app.add_option("--rate-tol", o.rate_tol,
                 "Relative width at which the --max-rate bisection stops (default 0.01)")
      ->check(servesim::number_in(1e-6, 1.0));
  app.add_option("--out", o.out_dir, "Output folder (default out/<name>/sweep)")
      ->check(servesim::nonblank("a folder"));
  app.add_flag("--keep-runs", o.keep_runs,
               "Write every run's simulate outputs under OUT/runs/ (off: only the summaries "
               "are kept)");
  bool no_plots = false;
  app.add_flag("--no-plots", no_plots, "Make no plots (they need python3-matplotlib)");
  app.add_flag("--quiet,-q", o.quiet, "Print nothing but errors");
  app.add_flag("--bands", o.bands,
               "With --pick: rerun every point under the error model's band draws and report "
               "how often the pick holds (selection.json \"bands\")");
  app.add_option("--band-draws", o.band_draws, "Draws of --bands (default 5)")
      ->check(CLI::Range(3, 50));
  app.add_option("--error-model", o.error_model,
                 "Error model of --bands (default data/measured/error_model.yaml)");
  const int code = servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    o.plots = !no_plots;
    if (shards->rank() != 0) o.quiet = true;
    if (!o.quiet && isatty(STDERR_FILENO)) o.progress = &std::cerr;
    o.stop = servesim::stop_on_signals();
    try {
      return print_report(o, servesim::sweep::run_sweep(o, *shards));
    } catch (const servesim::InputError& e) {
      // Every rank gets here together; one message, and MPI is finalised on the way out.
      if (shards->rank() == 0) std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  });
  shards.reset();
  return code;
}
