#include "costmodels/analytical/power_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/util/units.hpp"

namespace servesim {

std::optional<PowerModel> PowerModel::for_gpu(const GpuSpec& gpu) {
  if (!gpu.file.is_map()) return std::nullopt;
  const std::optional<ConfigNode> s = gpu.file.find("power");
  if (!s) return std::nullopt;
  s->require_map("the power model's constants");
  s->check_keys({"source", "idle_w", "max_clock_mhz", "min_clock_mhz", "v_min", "pj_per_flop",
                 "sm_w_per_ghz", "pj_per_byte", "onchip_pj_per_byte"});
  for (const char* key : {"source", "v_min", "sm_w_per_ghz", "pj_per_byte"}) (void)s->at(key);
  PowerModel p;
  p.idle_w = s->get_positive("idle_w");
  p.max_clock_mhz = s->get_positive("max_clock_mhz");
  p.min_clock_mhz = s->get_positive("min_clock_mhz");
  p.v_min = s->get_positive_fraction("v_min", 0);
  p.pj_per_flop = s->get_positive("pj_per_flop");
  p.sm_w_per_ghz = s->get_nonnegative("sm_w_per_ghz", 0);
  p.pj_per_byte = s->get_nonnegative("pj_per_byte", 0);
  p.onchip_pj_per_byte = s->get_nonnegative("onchip_pj_per_byte", 0);
  if (p.min_clock_mhz >= p.max_clock_mhz) {
    s->at("min_clock_mhz")
        .fail(fmt::format("min_clock_mhz {} must be below max_clock_mhz {}", p.min_clock_mhz,
                          p.max_clock_mhz));
  }
  if (p.max_clock_mhz < gpu.boost_clock_mhz) {
    s->at("max_clock_mhz")
        .fail(fmt::format(
            "max_clock_mhz {} is below the boost clock {} (the V/F curve tops out at or above it)",
            p.max_clock_mhz, gpu.boost_clock_mhz));
  }
  if (p.idle_w >= gpu.tdp_w) {
    s->at("idle_w").fail(fmt::format("idle_w {} must be below tdp_w {}", p.idle_w, gpu.tdp_w));
  }
  return p.derive(gpu);
}

PowerModel& PowerModel::derive(const GpuSpec& gpu) {
  const double ghz = max_clock_mhz / kMhzPerGhz;
  boost_clock_mhz = gpu.boost_clock_mhz;
  clock_w = sm_w_per_ghz * gpu.sms * ghz;
  // The bf16 tensor rate scales with the clock: datasheet TFLOP/s at boost × f_max / boost.
  tensor_w = pj_per_flop * kJoulesPerPicojoule * gpu.bf16_tflops * kFlopPerSPerTflops *
             max_clock_mhz / gpu.boost_clock_mhz;
  memory_w = pj_per_byte * kJoulesPerPicojoule * gpu.memory_bw_gb_per_s * kBytesPerSPerGbPerS;
  onchip_w =
      onchip_pj_per_byte * kJoulesPerPicojoule * gpu.memory_bw_gb_per_s * kBytesPerSPerGbPerS;
  return *this;
}

PowerModel::CapClock PowerModel::settle_under_cap(double cap_w, double u, double m) const {
  const double top_w = board_w(max_clock_mhz, u, m);
  if (top_w <= cap_w) return {max_clock_mhz, top_w};
  const double budget = cap_w - idle_w - m * memory_w;
  const double k = clock_w + u * tensor_w + m * onchip_w;
  if (budget <= 0 || k <= 0) return {min_clock_mhz, top_w};
  // Above the floor (v = φ): φ³·k = budget; on it (v = v_min): φ·v_min²·k = budget.
  double phi = std::cbrt(budget / k);
  if (phi < v_min) phi = budget / (k * v_min * v_min);
  return {std::clamp(phi * max_clock_mhz, min_clock_mhz, max_clock_mhz), top_w};
}

}  // namespace servesim
