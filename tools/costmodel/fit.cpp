#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "costmodels/analytical/calibration.hpp"
#include "sim/config/input_error.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
namespace fs = std::filesystem;
using namespace costmodel_cmd;

std::string run_fit(const CostmodelArgs& a) {
  if (!a.engine.empty() && !a.write_file.empty()) {
    // The engine's constants (a tile ladder, say) would be written as the GPU's own.
    throw InputError(
        "--write with --engine: a hardware file holds the GPU's constants, not a software "
        "stack's; fit without --engine to write one");
  }
  Context c = load(a, true);
  std::error_code exists_ec;
  if (!a.write_file.empty() && fs::exists(a.write_file, exists_ec)) {
    const GpuSpec target = Catalog::load_gpu(ConfigNode::load_file(a.write_file));
    if (target.name != c.gpu.name) {
      throw InputError(fmt::format(
          "--write: {} is {}'s hardware file, not {}'s (expected a new file or this GPU's)",
          a.write_file, target.name, c.gpu.name));
    }
  }
  const FitData d = read_fit_data(c);
  FitReport report = fit_home_constants(d.files, d.models, c.gpu, c.params);
  if (!a.network.empty()) report.merge(fit_network_constants(a.network, c.gpu, report.params));
  if (c.engine) {
    report.text = c.title() +
                  (c.engine->covers(c.gpu) ? ": the fit refits its constants from its own start; "
                                             "the engine's others (a tile ladder, say) hold\n"
                                           : "\n") +
                  report.text;
  }
  if (!a.write_file.empty()) {
    // A new FILE starts as the hardware file's own text, comments and layout included.
    std::ostringstream text;
    text << open_input_file(c.gpu.file.file(), "the GPU's hardware file").rdbuf();
    write_fitted_section(a.write_file, report, text.str());
  }
  return report.text + uncataloged_text(c);
}

}  // namespace servesim
