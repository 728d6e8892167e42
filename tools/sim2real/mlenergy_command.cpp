#include "tools/sim2real/mlenergy_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "tools/common/plot_runner.hpp"

namespace servesim::sim2real {

int run_mlenergy_command(const std::vector<std::string>& files, EnergyReplayOptions energy,
                         const ReplayOptions& options, const std::string& out_dir, bool json,
                         const std::string& plot_file) {
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
    make_output_folder(out_dir, "--out");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto path = std::filesystem::path(out_dir) / fmt::format("mlenergy_{:03}.yaml", i);
      std::ofstream f(path);
      f << results[i].config_yaml;
      if (!f) throw InputError(fmt::format("{}: cannot write", path.string()));
    }
    std::ofstream f(std::filesystem::path(out_dir) / "report.json");
    f << doc.dump(2) << "\n";
  }
  std::cout << (json ? doc.dump(2) + "\n" : energy_report_table(doc));
  if (!plot_file.empty())
    plot_beside(plot_file, "mlenergy", doc.dump(2) + "\n", ".json", std::cout, std::cerr);
  return 0;
}

}  // namespace servesim::sim2real
