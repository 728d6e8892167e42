// sim2real --experiments CSV [--only ID,…] [--out DIR] [--json] [--held-out ID,…] [--fit] …
// sim2real --mlenergy FILE… [--prompt-tokens N] [--out DIR] [--json] [--plot FILE]
// Replays the measured vLLM runs of experiments.csv (exactly where a trace exists, else from the
// workload's definition), or the measured throughput/ITL/power rows of ML.ENERGY leaderboard
// files, and scores the simulator against the measurements.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include "sim/config/input_error.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/tool_common.hpp"
#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/mlenergy.hpp"
#include "tools/sim2real/report.hpp"

namespace {

// The ids of a comma-separated list ("a, b" means a and b); an empty list means none, but an
// empty item ("a,,b", ",") is an error naming `flag`.
std::vector<std::string> split_ids(const std::string& s, std::string_view flag) {
  std::vector<std::string> out;
  if (s.find_first_not_of(" \t") == std::string::npos) return out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto first = item.find_first_not_of(" \t");
    if (first == std::string::npos) {
      throw servesim::InputError(
          fmt::format("{}: empty run id in '{}' (expected comma-separated run ids)", flag, s));
    }
    out.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// sim2real --mlenergy: read every file, replay every row, report.
int replay_mlenergy(const std::vector<std::string>& files,
                    servesim::sim2real::EnergyReplayOptions energy,
                    const servesim::sim2real::ReplayOptions& options, const std::string& out_dir,
                    bool json, const std::string& plot_file) {
  using namespace servesim::sim2real;
  energy.seed = options.seed;
  if (!options.engine.empty()) energy.engine = options.engine;
  std::vector<EnergyRow> rows;
  for (const auto& f : files) {
    auto more = read_energy_file(f);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  const std::vector<EnergyResult> results = replay_energy_rows(rows, energy);
  const auto doc = energy_report_json(results, energy);
  if (!out_dir.empty()) {
    servesim::make_output_folder(out_dir, "--out");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto path = std::filesystem::path(out_dir) / fmt::format("mlenergy_{:03}.yaml", i);
      std::ofstream f(path);
      f << results[i].config_yaml;
      if (!f) throw servesim::InputError(fmt::format("{}: cannot write", path.string()));
    }
    std::ofstream f(std::filesystem::path(out_dir) / "report.json");
    f << doc.dump(2) << "\n";
  }
  std::cout << (json ? doc.dump(2) + "\n" : energy_report_table(doc));
  if (!plot_file.empty()) servesim::plot_beside(plot_file, "mlenergy", doc.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace servesim::sim2real;
  CLI::App app{"servesim: replay measured vLLM runs and score the simulator against them"};
  std::string csv;
  std::string only;
  std::string out_dir;
  std::string held_out = default_held_out();
  bool json = false;
  bool fit = false;
  bool write = false;
  ReplayOptions options;
  bool no_prefix_caching = false;
  auto* experiments_opt = app.add_option("--experiments", csv, "experiments.csv");
  std::vector<std::string> energy_files;
  auto* energy_opt =
      app.add_option("--mlenergy", energy_files,
                     "ML.ENERGY leaderboard files (v3 models/*.json, v2 bs*+tp*+pp*.json) to "
                     "replay instead of experiments.csv: each row's batch, output lengths and "
                     "the benchmark's multi-turn chat prompts; scores output tok/s, ITL p50/p90, "
                     "power and J/token over the benchmark's steady-state window")
          ->excludes(experiments_opt);
  servesim::sim2real::EnergyReplayOptions energy;
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
  app.add_option("--only", only, "Comma-separated run ids (exp_id column)");
  app.add_option("--out", out_dir, "Write each run's config (and report.json) here");
  app.add_flag("--json", json, "Print the report as JSON instead of the table");
  app.add_option(
      "--held-out", held_out,
      "Traced runs held out of any fit (comma-separated ids; default: " + held_out + ")");
  app.add_option("--seed", options.seed, "Seed of the regenerated workloads")
      ->check(servesim::whole_number_in(0, UINT64_MAX));
  app.add_option("--output-tokens", options.output_tokens,
                 "nominal (output_len per request of ignore_eos runs) or trace")
      ->check(CLI::IsMember({"nominal", "trace"}));
  app.add_flag("--no-prefix-caching", no_prefix_caching, "Generate configs without prefix caching");
  app.add_option("--async-scheduling", options.async_scheduling,
                 "auto (default): vLLM's async scheduling as the engine profile says, else for "
                 "images >= 0.12; off: never")
      ->check(CLI::IsMember({"off", "auto"}));
  int threads = 0;
  app.add_option("--threads", threads,
                 "Replays run at once (oneTBB; default 0: one per core). Results do not depend on "
                 "it; per-run wall times are cleanest with 1")
      ->check(servesim::whole_number_in(0, 4096));
  double sensitivity_pct = 2;
  app.add_option("--sensitivity", sensitivity_pct,
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
                 "default) or floor (plus a learned host floor, the seed's E1.19)")
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
      app.add_flag("--fit", fit,
                   "Fit the engine constants (host floors, decode-attention bandwidth, request "
                   "overhead) on the traced, non-overloaded runs that are not held out, print them "
                   "as an engine-file entry, then report with them");
  app.add_flag("--write", write,
               "With --fit: write the fitted constants into configs/engines/<engine>.yaml")
      ->needs(fit_flag);
  std::string plot_file;
  app.add_option("--plot", plot_file,
                 "Draw simulated against measured per run and metric into this PNG or SVG (the "
                 "report goes to FILE.json beside it)")
      ->check(servesim::nonblank("FILE"));
  return servesim::tool_main(app, argc, argv, [&] {
    std::optional<tbb::global_control> limit;
    if (threads > 0) {
      limit.emplace(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(threads));
    }
    if (!energy_files.empty()) {
      return replay_mlenergy(energy_files, energy, options, out_dir, json, plot_file);
    }
    if (csv.empty()) {
      std::cerr << "sim2real: --experiments or --mlenergy is required (see --help)\n";
      return 2;
    }
    options.prefix_caching = !no_prefix_caching;
    const std::vector<Experiment> all = read_experiments(csv);
    std::vector<const Experiment*> selected;
    if (!out_dir.empty()) servesim::make_output_folder(out_dir, "--out");
    const auto only_ids = split_ids(only, "--only");
    for (const auto& id : only_ids) {
      const auto it =
          std::find_if(all.begin(), all.end(), [&](const auto& e) { return e.id == id; });
      if (it == all.end()) {
        throw servesim::InputError(fmt::format("--only: no run '{}' in {}", id, csv));
      }
    }
    for (const auto& e : all) {
      if (only_ids.empty() || std::find(only_ids.begin(), only_ids.end(), e.id) != only_ids.end()) {
        selected.push_back(&e);
      }
    }
    Report report;
    for (const auto& id : split_ids(held_out, "--held-out")) report.held_out.insert(id);
    check_held_out(all, report.held_out, options, csv, /*ids_only=*/true);  // before any fit
    if (fit) {
      const FitResult f = fit_engine_constants(all, report.held_out, options, csv);
      options.engine_substitutes = f.engines;
      std::cerr << f.log << "engine-file entry:\n" << f.yaml;
      if (write) {
        for (const auto& path : write_engine_files(f)) std::cerr << "wrote " << path << "\n";
      }
    }
    // No held-out run may be scored with constants fitted on it.
    check_held_out(all, report.held_out, options, csv, /*ids_only=*/false);
    options.sensitivity_delta = sensitivity_pct / 100.0;
    report.options = options;
    servesim::Progress progress(!json && isatty(STDERR_FILENO) != 0, selected.size());
    report.runs = replay_all(selected, options, csv, &progress);
    for (const Experiment* e : selected) {
      if (!out_dir.empty()) {
        const auto dir = std::filesystem::path(out_dir) / ("sim2real_" + e->id);
        servesim::make_output_folder(dir.string(), "--out");
        std::ofstream f(dir / "config.yaml");
        f << make_config_yaml(*e, options, (dir / "out").string());
        if (!f)
          throw servesim::InputError(fmt::format("{}: cannot write config.yaml", dir.string()));
      }
    }
    summarize(report);
    const auto doc = to_json(report);
    if (!out_dir.empty()) {
      const auto path = std::filesystem::path(out_dir) / "report.json";
      std::ofstream f(path);
      f << doc.dump(2) << "\n";
      if (!f) throw servesim::InputError(fmt::format("{}: cannot write", path.string()));
    }
    if (json) {
      std::cout << doc.dump(2) << "\n";
    } else {
      std::cout << format_table(report);
    }
    if (!plot_file.empty()) servesim::plot_beside(plot_file, "sim2real", doc.dump(2) + "\n");
    return 0;
  });
}
