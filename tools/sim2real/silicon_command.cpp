#include "tools/sim2real/silicon_command.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "costmodels/analytical/engine_profile.hpp"
#include "sim/config/input_error.hpp"
#include "tools/common/plot_runner.hpp"
#include "tools/sim2real/replay.hpp"
#include "tools/sim2real/silicon_fit.hpp"
#include "tools/sim2real/silicon_frontier.hpp"
#include "tools/sim2real/silicon_layouts.hpp"

namespace servesim::sim2real {

int run_silicon_command(const std::string& file, SiliconOptions options,
                        const SiliconCommandArgs& args) {
  const std::string& out_dir = args.out_dir;
  const std::vector<SiliconRow> rows = read_silicon_file(file);
  if (!args.fit_backend.empty()) {
    const SiliconFit fit = fit_silicon_engine(rows, args.fit_backend, options);
    std::cerr << fit.log;
    std::cout << fit.yaml;
    options.engines[args.fit_backend] = fit.constants.inline_yaml(
        EngineProfile::load(ConfigNode::parse(fit.engine, "--fit"))->file, fit.engine, fit.gpu);
  }
  const std::vector<SiliconResult> results = replay_silicon_rows(rows, options);
  nlohmann::json doc = silicon_report_json(results, options);
  if (args.frontier) {
    std::size_t group = 0;
    const LayoutPlanner plan = [&](const LayoutQuery& q) {
      // The planning takes minutes: say which group is under way.
      std::cerr << fmt::format("--frontier: planning group {} ({} {} {}/{}, up to {} GPUs)…",
                               ++group, q.model, q.system, q.isl, q.osl, q.max_gpus)
                << std::flush;
      LayoutSearch s = search_layouts(q, options);
      std::cerr << fmt::format(" {} runs, {:.0f} s\n", s.runs, s.wall_s);
      return s;
    };
    doc["frontier"] = silicon_frontier_json(results, options, plan);
  }
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
  std::cout << (args.json ? doc.dump(2) + "\n" : silicon_report_table(doc));
  if (args.frontier && !args.json) std::cout << silicon_frontier_table(doc["frontier"]);
  if (!args.plot_file.empty()) {
    plot_beside(args.plot_file, "silicon", doc.dump(2) + "\n", ".json", std::cout, std::cerr);
  }
  return 0;
}

}  // namespace servesim::sim2real
