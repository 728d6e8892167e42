#pragma once

#include <optional>

#include "sim/config/config_node.hpp"

namespace servesim {

// The `kv_offload:` section: a host-memory (CPU) KV tier behind every replica's GPU KV cache
// (as vLLM's CPU offloading connector, LMCache or BLIS's tiered KV). Absent: no CPU tier, and
// nothing of a run changes.
// Invariants after parse: cpu_gib > 0; link_gb_per_s is unset (each GPU's pcie_gb_per_s) or > 0.
struct KvOffloadConfig {
  static constexpr double kMaxCpuGib = 65536;
  static constexpr double kMaxLinkGbPerS = 10000;

  ConfigNode node;
  // Host memory per replica for KV, in GiB (2^30 bytes), over all of the replica's GPUs.
  double cpu_gib = 0;
  // Bandwidth of each GPU's host link per direction, GB/s (10^9 bytes); unset: the GPU's
  // pcie_gb_per_s. Set it for other links (a Grace Hopper C2C link, a PCIe link slower than x16).
  std::optional<double> link_gb_per_s;
  // Loads overlap the step's compute (layer-wise pipelined): the step takes max(compute, load)
  // instead of compute + load.
  bool overlap = false;

  static KvOffloadConfig parse(const ConfigNode& node);
};

}  // namespace servesim
