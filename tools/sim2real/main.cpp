// sim2real --experiments CSV [--only ID,…] [--out DIR] [--json] [--held-out ID,…] [--fit] …
// sim2real --mlenergy FILE… [--prompt-tokens N] [--out DIR] [--json] [--plot FILE]
// Replays the measured vLLM runs of experiments.csv (exactly where a trace exists, else from the
// workload's definition), or the measured throughput/ITL/power rows of ML.ENERGY leaderboard
// files, and scores the simulator against the measurements.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <tbb/global_control.h>

#include "tools/common/option_validators.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/sim2real/experiments_command.hpp"
#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/mlenergy_command.hpp"
#include "tools/sim2real/report.hpp"
#include "tools/sim2real/silicon_command.hpp"

int main(int argc, char** argv) {
  using namespace servesim::sim2real;
  CLI::App app{"servesim: replay measured vLLM runs and score the simulator against them"};
  ExperimentsArgs args;
  args.held_out = default_held_out();
  ReplayOptions options;
  auto* experiments_opt = app.add_option("--experiments", args.csv, "experiments.csv");
  std::vector<std::string> energy_files;
  auto* energy_opt =
      app.add_option("--mlenergy", energy_files,
                     "ML.ENERGY leaderboard files (v3 models/*.json, v2 bs*+tp*+pp*.json) to "
                     "replay instead of experiments.csv: each row's batch, output lengths and "
                     "the benchmark's multi-turn chat prompts; scores output tok/s, ITL p50/p90, "
                     "power and J/token over the benchmark's steady-state window")
          ->excludes(experiments_opt);
  std::string silicon_file;

  auto* silicon_opt =
      app.add_option("--silicon", silicon_file,
                     "An InferenceX silicon CSV (silicon_sample.csv layout) to replay instead: "
                     "each row's model, system, engine, precision, layout and client concurrency; "
                     "scores mean TTFT and TPOT and lists every row it cannot run with the reason")
          ->excludes(experiments_opt)
          ->excludes(energy_opt);
  std::string silicon_fit;
  app.add_option("--fit-engine", silicon_fit,
                 "With --silicon: fit this backend's engine profile (vllm, sglang or trtllm) on "
                 "the rows its file declares (fitted.silicon_rows), print the constants, then "
                 "report with them")
      ->check(CLI::IsMember({"vllm", "sglang", "trtllm"}))
      ->needs(silicon_opt);
  bool silicon_frontier = false;
  app.add_flag("--frontier", silicon_frontier,
               "With --silicon: per group of model, system and ISL/OSL with ≥ 5 rows run, pick "
               "the configuration of most simulated tokens/s/GPU at each per-user speed and "
               "compare it with the measured frontier (gap, share within 10%)")
      ->needs(silicon_opt);
  EnergyReplayOptions energy;
  app.add_option("--prompt-tokens", energy.prompt_tokens_mean,
                 "With --mlenergy: mean prompt tokens of the request set (default 634, ML.ENERGY's "
                 "own figure for its LMArena chat set)")
      ->check(servesim::number_in(1.0, 16384.0))
      ->needs(energy_opt);
  app.add_option("--turns", energy.turns_mean,
                 "With --mlenergy: mean turns per conversation (default 2.48: Chatbot Arena's "
                 "message lengths at the mean prompt)")
      ->check(servesim::number_in(1.0, 100.0))
      ->needs(energy_opt);
  app.add_option("--only", args.only, "Comma-separated run ids (exp_id column)");
  app.add_option("--out", args.out_dir, "Write each run's config (and report.json) here");
  app.add_flag("--json", args.json, "Print the report as JSON instead of the table");
  app.add_option(
      "--held-out", args.held_out,
      "Traced runs held out of any fit (comma-separated ids; default: " + args.held_out + ")");
  app.add_option("--seed", options.seed, "Seed of the regenerated workloads")
      ->check(servesim::whole_number_in(0, UINT64_MAX));
  app.add_option("--output-tokens", options.output_tokens,
                 "nominal (output_len per request of ignore_eos runs) or trace")
      ->check(CLI::IsMember({"nominal", "trace"}));
  app.add_flag("--no-prefix-caching", args.no_prefix_caching,
               "Generate configs without prefix caching");
  app.add_option("--async-scheduling", options.async_scheduling,
                 "auto (default): vLLM's async scheduling as the engine profile says, else for "
                 "images >= 0.12; off: never")
      ->check(CLI::IsMember({"off", "auto"}));
  int threads = 0;
  app.add_option("--threads", threads,
                 "Replays run at once (oneTBB; default 0: one per core). Results do not depend on "
                 "it; per-run wall times are cleanest with 1")
      ->check(servesim::whole_number_in(0, 4096));
  app.add_option("--sensitivity", args.sensitivity_pct,
                 "Replay each run twice more with every step time +/- this many percent and "
                 "report how far the metrics move (default 2; 0: skip)")
      ->check(servesim::number_in(0.0, 50.0));
  auto* online_opt =
      app.add_option(
             "--online", options.online,
             "frozen or peeking: replay each traced run once more under the online learner "
             "of the step time and request overhead (E1.19), learning from the first "
             "--learn-fraction of its requests (frozen) or from all (peeking, a diagnostic), "
             "and score it and the static replay on the rest")
          ->check(CLI::IsMember({"frozen", "peeking"}));
  app.add_option("--online-learn", options.online_learn,
                 "With --online: what a step learns: scale (its price x a learned factor, the "
                 "default) or floor (plus a learned host floor)")
      ->check(CLI::IsMember({"scale", "floor"}))
      ->needs(online_opt);
  app.add_option("--online-alpha", options.online_alpha,
                 "The online learner's rate per observation (default 0.05)")
      ->check(servesim::number_in(1e-6, 1.0))
      ->needs(online_opt);
  app.add_option("--learn-fraction", options.learn_fraction,
                 "With --online: the share of each run's requests (first by id) it learns from "
                 "(default 0.2)")
      ->check(servesim::number_in(0.01, 0.99))
      ->needs(online_opt);
  app.add_option("--engine", options.engine,
                 "Engine profile for every run: a name under configs/engines/, a YAML file, or "
                 "an inline YAML map (default: per run, the profile whose images match)");
  auto* fit_flag =
      app.add_flag("--fit", args.fit,
                   "Fit the engine constants (host floors, decode-attention bandwidth, request "
                   "overhead) on the traced, non-overloaded runs that are not held out, print them "
                   "as an engine-file entry, then report with them");
  app.add_flag("--write", args.write,
               "With --fit: write the fitted constants into configs/engines/<engine>.yaml")
      ->needs(fit_flag);
  app.add_option("--plot", args.plot_file,
                 "Draw simulated against measured per run and metric into this PNG or SVG (the "
                 "report goes to FILE.json beside it)")
      ->check(servesim::nonblank("FILE"));
  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    std::optional<tbb::global_control> limit;
    if (threads > 0) {
      limit.emplace(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(threads));
    }
    if (!silicon_file.empty()) {
      SiliconOptions silicon;
      silicon.seed = options.seed;
      if (!options.engine.empty()) silicon.engines["vllm"] = options.engine;
      return run_silicon_command(
          silicon_file, silicon,
          {args.out_dir, args.json, args.plot_file, silicon_fit, silicon_frontier});
    }
    if (!energy_files.empty()) {
      return run_mlenergy_command(energy_files, energy, options, args.out_dir, args.json,
                                  args.plot_file);
    }
    return run_experiments_command(args, options);
  });
}
