#pragma once

#include <cstdint>
#include <string>

#include "sim/replica_spec.hpp"

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
struct MemoryPlan {
  double gpu_bytes = 0;
  double weight_bytes = 0;      // per GPU
  double activation_bytes = 0;  // per GPU
  double block_bytes = 0;       // per GPU
  std::int64_t num_blocks = 0;  // ≤ 0 means the model does not fit
};

MemoryPlan plan_kv_memory(const ReplicaSpec& replica, double gpu_memory_utilization,
                          std::int32_t block_size, std::int32_t max_num_batched_tokens,
                          std::int32_t max_num_seqs);

}  // namespace servesim
