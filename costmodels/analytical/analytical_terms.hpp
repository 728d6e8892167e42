#pragma once

#include <array>
#include <string_view>

#include "sim/config/config_node.hpp"

namespace servesim {

// Switches for each term of the analytical model, so `costmodel ablate` can build an additive
// ladder from the bare roofline (all off) to the full model (all on). Plain value type.
struct AnalyticalTerms {
  bool efficiency = true;   // per-SKU tc_util·η_duty (and f_clk) on GEMMs and attention
  bool launch = true;       // per-kernel launch floors (GEMM, light, attention)
  bool wave = true;         // wave quantization / launched-grid efficiency
  bool l2_law = true;       // η_mem(working set / L2) on the memory branch
  bool split_k = true;      // split-K when tiles cannot fill the GPU, fp32 partials as traffic
  bool knee = true;         // smooth roofline (t_c^q + t_m^q)^(1/q) instead of max
  bool light = true;        // per-kernel achieved bandwidth for norms, RoPE, activation, adds
  bool row_walk = true;     // per-token light kernels: one CTA walks each token's row
  bool light_l2 = true;     // a light kernel reads the input the kernel before wrote from L2
  bool attention = true;    // attention priced with its own efficiencies (off: bare roofline)
  bool collectives = true;  // TP all-reduces
  bool host = true;         // host floor S(N)

  static constexpr std::array<std::string_view, 12> kNames = {
      "efficiency", "launch",   "wave",     "l2_law",    "split_k",     "knee",
      "light",      "row_walk", "light_l2", "attention", "collectives", "host"};
  bool& operator[](std::size_t i);
  static AnalyticalTerms all_off();
  // Reads a `terms:` map of booleans (unknown names are errors).
  void apply(const ConfigNode& node);
};

}  // namespace servesim
