#include "tools/sim2real/experiments_command.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "sim/config/input_error.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/common/progress.hpp"
#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/report.hpp"

namespace servesim::sim2real {
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
      throw InputError(
          fmt::format("{}: empty run id in '{}' (expected comma-separated run ids)", flag, s));
    }
    out.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

int run_experiments_command(const ExperimentsArgs& a, ReplayOptions options) {
  if (a.csv.empty()) {
    std::cerr << "sim2real: --experiments or --mlenergy is required (see --help)\n";
    return 2;
  }
  options.prefix_caching = !a.no_prefix_caching;
  const std::vector<Experiment> all = read_experiments(a.csv);
  std::vector<const Experiment*> selected;
  if (!a.out_dir.empty()) make_output_folder(a.out_dir, "--out");
  const auto only_ids = split_ids(a.only, "--only");
  for (const auto& id : only_ids) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& e) { return e.id == id; });
    if (it == all.end()) {
      throw InputError(fmt::format("--only: no run '{}' in {}", id, a.csv));
    }
  }
  for (const auto& e : all) {
    if (only_ids.empty() || std::find(only_ids.begin(), only_ids.end(), e.id) != only_ids.end()) {
      selected.push_back(&e);
    }
  }
  Report report;
  for (const auto& id : split_ids(a.held_out, "--held-out")) report.held_out.insert(id);
  check_held_out(all, report.held_out, options, a.csv, /*ids_only=*/true);  // before any fit
  if (a.fit) {
    const FitResult f = fit_engine_constants(all, report.held_out, options, a.csv);
    options.engine_substitutes = f.engines;
    std::cerr << f.log << "engine-file entry:\n" << f.yaml;
    if (a.write) {
      for (const auto& path : write_engine_files(f)) std::cerr << "wrote " << path << "\n";
    }
  }
  // No held-out run may be scored with constants fitted on it.
  check_held_out(all, report.held_out, options, a.csv, /*ids_only=*/false);
  options.sensitivity_delta = a.sensitivity_pct / 100.0;
  report.options = options;
  Progress progress(!a.json && isatty(STDERR_FILENO) != 0 ? &std::cerr : nullptr, selected.size());
  report.runs = replay_all(selected, options, a.csv, &progress);
  for (const Experiment* e : selected) {
    if (!a.out_dir.empty()) {
      const auto dir = std::filesystem::path(a.out_dir) / ("sim2real_" + e->id);
      make_output_folder(dir.string(), "--out");
      std::ofstream f(dir / "config.yaml");
      f << make_config_yaml(*e, options, (dir / "out").string());
      if (!f) throw InputError(fmt::format("{}: cannot write config.yaml", dir.string()));
    }
  }
  summarize(report);
  const auto doc = to_json(report);
  if (!a.out_dir.empty()) {
    const auto path = std::filesystem::path(a.out_dir) / "report.json";
    std::ofstream f(path);
    f << doc.dump(2) << "\n";
    if (!f) throw InputError(fmt::format("{}: cannot write", path.string()));
  }
  if (a.json) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << format_table(report);
  }
  if (!a.plot_file.empty())
    plot_beside(a.plot_file, "sim2real", doc.dump(2) + "\n", ".json", std::cout, std::cerr);
  return 0;
}

}  // namespace servesim::sim2real
