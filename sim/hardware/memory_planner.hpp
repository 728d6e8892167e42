#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// How many KV blocks fit on each GPU of a replica, vLLM's way:
//   blocks = (utilization × GPU memory − weights − activation reserve) / bytes per block,
// where bytes per block = layers/PP × KV bytes per token per layer / TP × block_size.
// GPU memory: vendor "GB" of HBM parts equal GiB of device memory (H200 "141 GB" reports
// 143,771 MiB, H100 "80 GB" 81,559 MiB), so memory_gb is read as GiB; GDDR parts with ECC on
// report less (L40S and A40 "48 GB": 46,068 MiB), given as device_memory_mib.
// Activation reserve: vLLM profiles a forward pass of max_num_batched_tokens; we estimate its
// peak as the MLP intermediate and a few hidden-sized buffers per token, the sampler's fp32
// logits for max_num_seqs rows, and a fixed non-torch/CUDA-graph overhead.
// Pipeline stages hold what vLLM puts on them: their share of the layers (pp_stage_layers), the
// embedding on the first, the LM head (a copy of a tied embedding included) and the sampler's
// logits on the last. Every stage sizes its cache alike and the engine keeps the smallest count
// (vLLM V1 takes the minimum over workers); the plan reports that stage.
// An MoE replica laid out by expert or attention data parallelism holds per GPU what its
// attention group and expert rank hold (memory_planner.cpp), and its blocks are every group's.
struct MemoryPlan {
  double gpu_bytes = 0;
  double weight_bytes = 0;      // per GPU of the binding stage
  double activation_bytes = 0;  // per GPU of the binding stage
  double block_bytes = 0;       // per GPU of the binding stage
  int stage = 0;                // the pipeline stage with the fewest blocks
  std::int64_t num_blocks = 0;  // ≤ 0 means the model does not fit
};

// Layers per pipeline stage, vLLM's split (vllm/distributed/utils.py get_pp_indices): ⌊L/pp⌋
// each, and the r = L mod pp left over one each to stages pp−2, pp−3, …, pp−1−r, sparing the
// last stage (which holds the final norm and LM head).
std::vector<int> pp_stage_layers(int layers, int pp);

MemoryPlan plan_kv_memory(const ReplicaSpec& replica, double gpu_memory_utilization,
                          std::int32_t block_size, std::int32_t max_num_batched_tokens,
                          std::int32_t max_num_seqs);

}  // namespace servesim
