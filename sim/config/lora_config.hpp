#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"

namespace servesim {

// A projection a LoRA adapter may target: the attention q/k/v/o and the MLP gate/up/down.
enum class LoraModule : std::int8_t { kQ, kK, kV, kO, kGate, kUp, kDown };
const char* lora_module_name(LoraModule m);

// The `lora:` section: multi-LoRA serving on every replica of the run (vLLM's --enable-lora,
// --max-loras, --max-cpu-loras, --max-lora-rank). Absent: no adapters, and nothing of a run
// changes.
//
// Workload side: `num_adapters` adapters, each with a rank (`rank` for all, or `ranks` given
// in turn: adapter i has ranks[i mod len]) and the projections `target_modules` (default q, k,
// v, o) in every layer. Each request is on the base model with probability `base_fraction`,
// else on adapter k (0-based) with probability ∝ 1 / (k + 1)^zipf_s (seeded; zipf_s 0 is
// uniform).
// Replica side: `max_loras` GPU slots (distinct adapters one batch may hold), `max_cpu_loras`
// host-memory cache (≥ max_loras, as vLLM requires), and `disk_gb_per_s`, the bandwidth an
// adapter not cached on the host is read at; host→GPU copies run at the GPU's pcie_gb_per_s.
// Invariants after parse: num_adapters ≥ 1; every rank in [1, kMaxRank]; target_modules
// non-empty and distinct; 1 ≤ max_loras ≤ max_cpu_loras.
struct LoraConfig {
  static constexpr std::int64_t kMaxAdapters = 100'000;
  static constexpr std::int64_t kMaxRank = 512;

  ConfigNode node;
  std::int32_t num_adapters = 0;
  std::vector<std::int32_t> ranks;  // given in turn over the adapters
  std::vector<LoraModule> target_modules;
  double zipf_s = 1.0;
  double base_fraction = 0;
  std::int32_t max_loras = 1;
  std::int32_t max_cpu_loras = 0;  // after parse: ≥ max_loras
  double disk_gb_per_s = 2.0;

  static LoraConfig parse(const ConfigNode& node);
  std::int32_t rank_of(std::int32_t adapter) const {
    return ranks[static_cast<std::size_t>(adapter) % ranks.size()];
  }
};

}  // namespace servesim
