#pragma once

#include <cstddef>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/power_model.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// One bf16 projection GEMM (M × K by K × N) priced under each board cap at each token count M,
// as the analytical model prices it (costmodels/README.md, "costmodel power").
struct PowerSweep {
  struct Cell {
    KernelClock k;
    double tflops = 0;
  };
  std::vector<double> caps_w;            // ascending
  std::vector<int> tokens;               // the M of each row
  std::vector<std::vector<Cell>> cells;  // [row][cap]
  // Percent of TFLOP/s the lowest cap loses against the highest, for row i.
  double penalty_pct(std::size_t i) const;
  // Least-squares slope of the clock over the caps (MHz per W) for row i; 0 with one cap.
  double clock_slope_mhz_per_w(std::size_t i) const;
};

// `caps_w` ascending and distinct, each within the GPU's power limits.
PowerSweep sweep_gemm_power(const GpuSpec& gpu, const AnalyticalParams& params,
                            const PowerModel& pm, std::vector<double> caps_w,
                            std::vector<int> tokens, int gemm_k, int gemm_n);

}  // namespace servesim
