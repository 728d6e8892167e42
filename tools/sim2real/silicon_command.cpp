#include "tools/sim2real/silicon_command.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "tools/sim2real/replay.hpp"

namespace servesim::sim2real {

int run_silicon_command(const std::string& file, const SiliconOptions& options,
                        const std::string& out_dir, bool json) {
  const std::vector<SiliconRow> rows = read_silicon_file(file);
  const std::vector<SiliconResult> results = replay_silicon_rows(rows, options);
  const nlohmann::json doc = silicon_report_json(results, options);
  if (!out_dir.empty()) {
    make_output_folder(out_dir, "--out");
    for (const SiliconResult& r : results) {
      if (r.plan.config_yaml.empty()) continue;
      // The row's id as a file name: anything but letters, digits, '.', '-' and '_' becomes '_'.
      std::string name = r.row->id;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
      }
      const auto path = std::filesystem::path(out_dir) / (name + ".yaml");
      std::ofstream f(path);
      f << r.plan.config_yaml;
      if (!f) throw InputError(fmt::format("{}: cannot write", path.string()));
    }
    std::ofstream f(std::filesystem::path(out_dir) / "report.json");
    f << doc.dump(2) << "\n";
  }
  std::cout << (json ? doc.dump(2) + "\n" : silicon_report_table(doc));
  return 0;
}

}  // namespace servesim::sim2real
