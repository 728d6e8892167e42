#pragma once

#include <cstdint>
#include <string>

#include "sim/hardware/gpu_spec.hpp"
#include "tools/sim2real/silicon.hpp"

namespace servesim::sim2real {

// What a row's serving engine was launched with and how its client measured it, as servesim
// config: the replica's KV-cache format and CUDA-graph use, the scheduler section (the engine's
// batching rule with the launch flags or the engine's defaults), and the workload's client and
// lengths.
struct ServerLaunch {
  std::string kv_cache_dtype = "auto";
  std::string graph_mode = "piecewise";
  std::int64_t graph_max_tokens = 0;
  std::string scheduler;  // a `scheduler:` section, YAML block text
  // Its limits as numbers: the token budget, seats, model length and memory fraction.
  std::int64_t tokens = 0;
  std::int64_t seqs = 0;
  std::int64_t max_model_len = 0;
  double memory_fraction = 0;
  std::string client;  // `client:` and `lengths:` lines of the workload section
};

// The launch of `row` (backend vllm, sglang or trtllm) on `gpu`, serving `model` at `precision`
// (a config precision name) laid out as `layout`, by the row's collection. The engines' token
// budgets are per attention group (each DP rank schedules its own), the replica's the sum. Each
// engine's rule and default names its source in the .cpp.
ServerLaunch server_launch(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu,
                           const ModelSpec& model, const std::string& precision);

}  // namespace servesim::sim2real
