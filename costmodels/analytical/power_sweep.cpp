#include "costmodels/analytical/power_sweep.hpp"

#include <utility>

#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/gemm_model.hpp"
#include "sim/util/units.hpp"

namespace servesim {

PowerSweep sweep_gemm_power(const GpuSpec& gpu, const AnalyticalParams& params,
                            const PowerModel& pm, std::vector<double> caps_w,
                            std::vector<int> tokens, int gemm_k, int gemm_n) {
  PowerSweep s;
  s.caps_w = std::move(caps_w);
  s.tokens = std::move(tokens);
  const std::vector<double>& caps = s.caps_w;
  const std::vector<int>& ms = s.tokens;
  const double peak = gpu.bf16_flop_per_ns();  // at boost
  const AnalyticalTerms terms;
  s.cells.assign(ms.size(), std::vector<PowerSweep::Cell>(caps.size()));
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const GemmShape g{static_cast<double>(ms[i]), static_cast<double>(gemm_k),
                      static_cast<double>(gemm_n), 1};
    for (std::size_t j = 0; j < caps.size(); ++j) {
      PowerSweep::Cell& cell = s.cells[i][j];
      cell.k =
          gemm_under_cap(g, 2, peak, params.clock_fraction, pm, caps[j], gpu, params, terms, 1.0);
      cell.tflops = g.flops() / cell.k.time_ns / kFlopPerNsPerTflops;
    }
  }
  return s;
}

double PowerSweep::penalty_pct(std::size_t i) const {
  return 100 * (1 - cells[i].front().tflops / cells[i].back().tflops);
}

double PowerSweep::clock_slope_mhz_per_w(std::size_t i) const {
  const std::vector<double>& caps = caps_w;
  if (caps.size() < 2) return 0.0;
  double mx = 0, my = 0;
  for (std::size_t j = 0; j < caps.size(); ++j) {
    mx += caps[j];
    my += cells[i][j].k.f_mhz;
  }
  mx /= static_cast<double>(caps.size());
  my /= static_cast<double>(caps.size());
  double sxy = 0, sxx = 0;
  for (std::size_t j = 0; j < caps.size(); ++j) {
    sxy += (caps[j] - mx) * (cells[i][j].k.f_mhz - my);
    sxx += (caps[j] - mx) * (caps[j] - mx);
  }
  return sxy / sxx;
}

}  // namespace servesim
