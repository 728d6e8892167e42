#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/power_model.hpp"
#include "costmodels/analytical/power_sweep.hpp"
#include "sim/config/input_error.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;

std::string run_power(const CostmodelArgs& a) {
  Context c = load(a, false);
  const std::optional<PowerModel> pm = PowerModel::for_gpu(c.gpu);
  if (!pm) {
    throw InputError(fmt::format(
        "--gpu {}: its hardware file has no `power:` section (the power model's constants; "
        "configs/hardware/rtx-5090.yaml has one)",
        c.gpu.name));
  }
  std::vector<double> caps = a.caps;
  if (caps.empty()) caps = {c.gpu.min_power_w > 0 ? c.gpu.min_power_w : c.gpu.tdp_w, c.gpu.tdp_w};
  for (const double cap : caps) {
    if (const std::string why = c.gpu.power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
  }
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  std::vector<int> ms = a.token_counts;
  if (ms.empty()) ms = {64, 256, 1024, 4096, 8192, 16384};
  const PowerSweep sweep = sweep_gemm_power(c.gpu, c.params, *pm, caps, ms, a.gemm_k, a.gemm_n);
  const auto& cells = sweep.cells;
  using Cell = PowerSweep::Cell;
  if (a.json) {
    nlohmann::json j = {{"gpu", c.gpu.name},
                        {"gemm", {{"k", a.gemm_k}, {"n", a.gemm_n}}},
                        {"caps_w", caps},
                        {"max_clock_mhz", pm->max_clock_mhz},
                        {"rows", nlohmann::json::array()}};
    for (std::size_t i = 0; i < ms.size(); ++i) {
      nlohmann::json row = {{"m", ms[i]},
                            {"penalty_pct", sweep.penalty_pct(i)},
                            {"clock_slope_mhz_per_w", sweep.clock_slope_mhz_per_w(i)},
                            {"cells", nlohmann::json::array()}};
      for (std::size_t k = 0; k < caps.size(); ++k) {
        const Cell& cell = cells[i][k];
        row["cells"].push_back({{"cap_w", caps[k]},
                                {"clock_mhz", cell.k.f_mhz},
                                {"power_w", cell.k.power_w},
                                {"tflops", cell.tflops},
                                {"tensor_activity", cell.k.u},
                                {"dram_activity", cell.k.m}});
      }
      j["rows"].push_back(row);
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "GPU {}: bf16 GEMM M × K {} × N {} under each cap (clock MHz / board W / TFLOP/s as "
      "priced, at the TDP as fitted); V/F top {:.0f} MHz, boost {:.0f} MHz\n",
      c.gpu.name, a.gemm_k, a.gemm_n, pm->max_clock_mhz, c.gpu.boost_clock_mhz);
  out += fmt::format("{:>7}", "M");
  for (const double cap : caps) out += fmt::format(" | {:>5.0f} W: MHz     W TFLOP/s", cap);
  out += fmt::format(" | penalty {:.0f}→{:.0f} W | MHz/W\n", caps.back(), caps.front());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    out += fmt::format("{:>7}", ms[i]);
    for (const Cell& cell : cells[i]) {
      out +=
          fmt::format(" | {:>12.0f} {:>5.0f} {:>8.1f}", cell.k.f_mhz, cell.k.power_w, cell.tflops);
    }
    out += fmt::format(" | {:>15.2f}% | {:>5.2f}\n", sweep.penalty_pct(i),
                       sweep.clock_slope_mhz_per_w(i));
  }
  return out;
}

}  // namespace servesim
