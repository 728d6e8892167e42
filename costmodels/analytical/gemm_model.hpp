#pragma once

#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/power_model.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "sim/hardware/gpu_spec.hpp"

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

// Wave efficiency of one tile choice, padding included:
//   grid:       slots = SMs·ctas_per_sm, waves = ⌈tiles/slots⌉, η = MN / (waves·slots·tm·tn)
//   persistent: launched = min(tiles, SMs)
//   cluster:    launched = min(tiles, Σ_GPC ⌊SM_gpc / c⌋ · c), η = MN /
//   (⌈tiles/launched⌉·SMs·tm·tn)
// Split-K (when enabled) multiplies the tile count by s ≤ K / split_k_min_k to fill idle slots.
GemmLaunch plan_gemm(const GemmShape& g, const GpuSpec& gpu, const AnalyticalParams& p,
                     bool use_wave, bool use_split_k);

// One way the library could run a GEMM: a tile and split-K factor from the ladder, with the
// waves it takes and the bytes it moves (inputs, output, weights, and the fp32 partials of a
// split-K reduction, written and read once each).
struct GemmCandidate {
  GemmLaunch launch;
  double waves = 1;
  double bytes = 0;
};

// Every (tile, split-K) candidate of the launch model; with `use_wave` off, one candidate at
// η = 1. Split factors are powers of two with tiles·s ≤ slots and K/s ≥ split_k_min_k.
std::vector<GemmCandidate> gemm_candidates(const GemmShape& g, double weight_bytes,
                                           const GpuSpec& gpu, const AnalyticalParams& p,
                                           bool use_wave, bool use_split_k);

// CTAs of a tm×tn tile that share one SM under a grid launch (tile-dependent occupancy).
int ctas_per_sm_for(int tile_m, int tile_n, const AnalyticalParams& p);

// A grid of `work` CTAs on `sms` SMs holding up to `c` CTAs each: the rounds it takes and its
// time in units of one CTA's run on a full SM. Full rounds cost c; a last round whose busiest
// SM holds k < c CTAs costs k / u(k), u(1) = lone_cta_utilization rising linearly to 1 at c
// (one CTA cannot hide its own latency), capped at c.
struct GridRounds {
  double waves = 0;
  double sm_units = 0;
};
GridRounds grid_rounds(double work, double sms, int c, const AnalyticalParams& p);

// SMs the clustered launch can occupy: Σ_GPC ⌊SM_gpc / c⌋ · c (all SMs when the layout is unknown,
// rounded down to a multiple of c).
int cluster_capacity(const GpuSpec& gpu, int cluster_size);

// L2-reuse memory efficiency η_mem(x) = eta_max · x / (x + x_half), x = working set / L2.
double eta_mem(double working_set_bytes, double l2_bytes, const AnalyticalParams& p);

// Smooth roofline (a^q + b^q)^(1/q) of two times that overlap (a knee instead of max(a, b)).
double knee_ns(double a, double b, double q);

// Time of one candidate without the launch floor (ns):
//   t_c = 2MKN / (peak · eff · η_wave) + waves · wave_ns,  t_m = L2-law time of its bytes,
//   t = (t_c^q + t_m^q)^(1/q) (knee on) or max(t_c, t_m).
double candidate_ns(const GemmShape& g, const GemmCandidate& c, double flops_per_ns_eff,
                    const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms);

// Time of one GEMM (all `count` instances) in ns: the fastest candidate (cuBLAS's heuristics
// aim at the fastest kernel) plus the launch floor. `flops_per_ns` is the peak for its
// precision and `f_clk` the realized clock fraction.
double gemm_ns(const GemmShape& g, double weight_bytes, double flops_per_ns, double f_clk,
               const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms,
               double launch_scale);
// The GEMM under a board cap (under_cap; costmodels/README.md, "costmodel power"): its tensor
// activity from its own FLOPs and time, its DRAM activity from its operand and output bytes; priced
// at f_clk · f(cap) / f(TDP).
KernelClock gemm_under_cap(const GemmShape& g, double weight_bytes, double flops_per_ns,
                           double f_clk, const PowerModel& pm, double cap_w, const GpuSpec& gpu,
                           const AnalyticalParams& p, const AnalyticalTerms& terms,
                           double launch_scale);

}  // namespace servesim
