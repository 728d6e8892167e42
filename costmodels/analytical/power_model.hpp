#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Board power of one GPU as a function of its SM clock and of what the running kernel does
// (costmodels/README.md, "costmodel power"), from the `power:` section of its hardware file:
//
//   P(f) = idle_w + (f/f_max) · v(f)² · (clock_w + u · tensor_w + m · onchip_w) + m · memory_w
//   v(f) = max(v_min, f/f_max)            (V_max at f_max, falling with f, floored at v_min)
//   clock_w  = sm_w_per_ghz · SMs · f_max       (clock tree and issue logic of busy SMs)
//   tensor_w = pj_per_flop · peak FLOP/s at f_max (bf16 tensor rate at full activity)
//   memory_w = pj_per_byte · DRAM bandwidth         (the DRAM itself: fixed energy per byte)
//   onchip_w = onchip_pj_per_byte · DRAM bandwidth  (the byte's way through L2, the crossbar and
//              an SM: switching on the core's clock and voltage, so a cap lowers it)
//
// u is the kernel's tensor activity (achieved / peak FLOP/s at its clock) and m its DRAM activity
// (achieved / datasheet bandwidth), both from the analytical model's own compute and memory
// times. Dynamic power ∝ f·V² is ≈ f³ while v > v_min, ∝ f on the voltage floor. Under a cap the
// clock settles where P = cap, clamped to [min_clock_mhz, max_clock_mhz].
//
// The carried constants are in units that do not depend on the board: energy per FLOP and per
// SM-GHz at V_max (a property of the process node), energy per DRAM byte (of the memory
// technology), the voltage floor as a share of V_max; idle power and the clock range are the
// board's own (each with its source in the file).
struct PowerModel {
  double idle_w = 0;
  double max_clock_mhz = 0;  // top of the V/F curve: the clock of light, cap-free work
  double min_clock_mhz = 0;
  double v_min = 0;         // voltage floor / V_max
  double pj_per_flop = 0;   // bf16 tensor FLOP at V_max
  double sm_w_per_ghz = 0;  // per SM, at V_max
  double pj_per_byte = 0;   // DRAM
  // Each DRAM byte also crosses L2, the crossbar and an SM's load path: energy per DRAM byte at
  // V_max, scaling with f·V² as the SMs' own. 0: not stated.
  double onchip_pj_per_byte = 0;
  // Board-derived (from the datasheet fields): the watts of each term at f_max, full activity.
  double clock_w = 0;
  double tensor_w = 0;
  double memory_w = 0;
  double onchip_w = 0;
  double boost_clock_mhz = 0;  // the datasheet clock the GEMM efficiency is quoted at

  // The GPU's `power:` section; none when the file has none (caps then use the placeholder law
  // of LayerPricer). Bad or missing keys are InputErrors naming the file and key.
  static std::optional<PowerModel> for_gpu(const GpuSpec& gpu);
  // With the board-derived terms computed from `gpu`'s datasheet fields.
  PowerModel& derive(const GpuSpec& gpu);

  // Inline: the analytical model prices every step's attention energy with them.
  double voltage(double f_mhz) const { return std::max(v_min, f_mhz / max_clock_mhz); }
  double board_w(double f_mhz, double u, double m) const {
    const double v = voltage(f_mhz);
    return idle_w + f_mhz / max_clock_mhz * v * v * (clock_w + u * tensor_w + m * onchip_w) +
           m * memory_w;
  }
  // The clock (MHz) where a kernel of activities (u, m) draws `cap_w`, within the clock range.
  double clock_under_cap(double cap_w, double u, double m) const {
    return settle_under_cap(cap_w, u, m).f_mhz;
  }
  // clock_under_cap's clock, with the power it found at the top clock on the way there.
  struct CapClock {
    double f_mhz = 0;
    double top_w = 0;  // board_w(max_clock_mhz, u, m)
  };
  CapClock settle_under_cap(double cap_w, double u, double m) const;
};

// Where one kernel settles under a cap: its clock, its time there, its activities and power.
struct KernelClock {
  double f_mhz = 0;
  double time_ns = 0;
  double u = 0;  // tensor activity
  double m = 0;  // DRAM activity
  double power_w = 0;
};
// A kernel at its own clock under `cap_w`: `time_ns(x)` is its time at clock fraction x (of the
// boost clock), `flops` its tensor FLOPs, `peak_flops_per_ns` the tensor peak at the boost clock
// and `bytes` its DRAM traffic. Iterates clock → time → activity → clock to the fixed point
// (≤ 8 rounds, damped after three against oscillation; a compute-bound kernel's activity does
// not depend on its clock, so it settles in one).
template <class TimeAt>
KernelClock settle_clock(const PowerModel& pm, const GpuSpec& gpu, double cap_w, double flops,
                         double peak_flops_per_ns, double bytes, TimeAt&& time_ns) {
  KernelClock k;
  double f = pm.max_clock_mhz;
  for (int round = 0; round < 8; ++round) {
    const double x = f / pm.boost_clock_mhz;
    k.f_mhz = f;
    k.time_ns = time_ns(x);
    k.u = k.time_ns > 0 ? flops / (k.time_ns * peak_flops_per_ns * x) : 0;
    k.m = k.time_ns > 0 ? bytes / (k.time_ns * gpu.memory_bw_gb_per_s) : 0;
    const double next = pm.clock_under_cap(cap_w, k.u, k.m);
    if (std::abs(next - f) < 0.5) break;  // within half a MHz (clock bins are 15 MHz)
    f = round < 3 ? next : 0.5 * (f + next);
  }
  k.power_w = pm.board_w(k.f_mhz, k.u, k.m);
  return k;
}

// A kernel under a board cap: its clock, power and activities settle at `cap_w` as
// settle_clock; its time is time_ns(f_clk · f(cap) / f(TDP)). The efficiency constants are
// fitted (or carried) at the default cap, whatever clock the GPU ran there, so a cap moves a
// price by the ratio of the kernel's own clocks and the default cap leaves it as it was.
template <class TimeAt>
KernelClock under_cap(const PowerModel& pm, const GpuSpec& gpu, double cap_w, double f_clk,
                      double flops, double peak_flops_per_ns, double bytes, TimeAt&& time_ns) {
  KernelClock k = settle_clock(pm, gpu, cap_w, flops, peak_flops_per_ns, bytes, time_ns);
  const double at_tdp =
      cap_w >= gpu.tdp_w
          ? k.f_mhz
          : settle_clock(pm, gpu, gpu.tdp_w, flops, peak_flops_per_ns, bytes, time_ns).f_mhz;
  k.time_ns = time_ns(f_clk * k.f_mhz / at_tdp);
  return k;
}

}  // namespace servesim
