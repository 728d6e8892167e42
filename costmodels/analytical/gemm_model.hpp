#pragma once

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "sim/gpu_spec.hpp"

namespace servesim {

// The tile a GEMM is launched with and what the launch achieves.
struct GemmLaunch {
  int tile_m = 0;
  int tile_n = 0;
  double tiles = 0;     // output tiles (× experts)
  double launched = 0;  // CTAs resident in the first wave
  int split_k = 1;
  double eta_wave = 1;  // useful MACs / MACs the occupied SM-time could do
};

// Wave efficiency of one tile choice (PHYSICS §2a), padding included:
//   grid:       slots = SMs·ctas_per_sm, waves = ⌈tiles/slots⌉, η = MN / (waves·slots·tm·tn)
//   persistent: launched = min(tiles, SMs)
//   cluster:    launched = min(tiles, Σ_GPC ⌊SM_gpc / c⌋ · c), η = MN /
//   (⌈tiles/launched⌉·SMs·tm·tn)
// Split-K (when enabled) multiplies the tile count by s ≤ K / split_k_min_k to fill idle slots.
GemmLaunch plan_gemm(const GemmShape& g, const GpuSpec& gpu, const AnalyticalParams& p,
                     bool use_wave, bool use_split_k);

// SMs the clustered launch can occupy: Σ_GPC ⌊SM_gpc / c⌋ · c (all SMs when the layout is unknown,
// rounded down to a multiple of c).
int cluster_capacity(const GpuSpec& gpu, int cluster_size);

// L2-reuse memory efficiency η_mem(x) = eta_max · x / (x + x_half), x = working set / L2.
double eta_mem(double working_set_bytes, double l2_bytes, const AnalyticalParams& p);

// Time of one GEMM (all `count` instances) in ns; `flops_per_ns` is the peak for its precision
// and `f_clk` the realized clock fraction.
double gemm_ns(const GemmShape& g, double weight_bytes, double flops_per_ns, double f_clk,
               const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms,
               double launch_scale);

}  // namespace servesim
