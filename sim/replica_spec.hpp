#pragma once

#include <string>

#include "sim/gpu_spec.hpp"

namespace servesim {

// Numeric formats a replica runs in.
enum class Precision { kBf16, kFp8 };

// One serving replica: a model on `tp × pp` GPUs of one kind. Immutable for a run.
struct ReplicaSpec {
  const GpuSpec* gpu = nullptr;
  const ModelSpec* model = nullptr;
  int tp = 1;
  int pp = 1;
  Precision weights = Precision::kBf16;  // FP8 weights run GEMMs at the FP8 peak
  double kv_dtype_bytes = 2.0;
  bool cuda_graphs = true;          // decode-only steps replayed from CUDA graphs (vLLM default)
  double power_cap_w = 0;           // 0 = the GPU's TDP
  std::string topology = "nvlink";  // nvlink | pairwise_nvlink | pcie (links between the TP GPUs)

  double weight_bytes_per_param() const { return weights == Precision::kFp8 ? 1.0 : 2.0; }
  double effective_power_cap_w() const { return power_cap_w > 0 ? power_cap_w : gpu->tdp_w; }
};

}  // namespace servesim
