#pragma once

#include <string>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/gpu_spec.hpp"

namespace servesim {

// The links between the p GPUs of one tensor-parallel group, as a Boost.Graph with a bandwidth
// (bytes/ns, one direction, already scaled by the link's achieved efficiency) on every edge:
//   nvlink           all-to-all NVLink through NVSwitch (DGX/HGX)
//   pairwise_nvlink  NVLink between GPUs 2i and 2i+1, PCIe between every other pair
//   pcie             PCIe between every pair
// A ring all-reduce visits the GPUs in index order and is limited by its slowest hop. With
// AllReduceAlgorithm::kVllmCustom and every pair on NVLink, messages below the custom size limit
// take vLLM's custom kernels instead: each rank reads its peers' buffers directly, then two
// barriers (start, end) of one hop latency each:
//   one-stage (p = 2, or p ≤ 4 and < 512 KiB, or p ≤ 8 and < 256 KiB): (p−1)·bytes / bw
//   two-stage (reduce-scatter + all-gather): 2(p−1)/p · bytes / bw
// Immutable after construction.
class TpTopology {
 public:
  TpTopology(int p, const std::string& kind, const GpuSpec& gpu, const AnalyticalParams& params);

  int size() const { return p_; }
  // Bandwidth of the slowest edge on the ring 0 → 1 → … → p−1 → 0 (bytes/ns).
  double ring_bottleneck_bytes_per_ns() const { return bottleneck_; }
  // Ring: t = 2(p−1)/p · bytes / bottleneck + 2(p−1) · hop latency; 0 for p = 1. Custom: above.
  double all_reduce_ns(double bytes) const;

 private:
  int p_;
  double bottleneck_ = 0;
  double hop_latency_ns_ = 0;
  bool custom_ = false;  // vLLM's custom all-reduce applies (algorithm chosen, all NVLink)
  double custom_max_bytes_ = 0;
};

// Pipeline parallelism: the time to hand `bytes` of activations from each of the pp−1 stage
// boundaries to the next stage, in sequence (one step passes every boundary once). GPU g of the
// replica is TP rank g % tp of stage g / tp; rank x of stage s sends to rank x of stage s+1 (all
// ranks in parallel, so one transfer per boundary) over NVLink when the topology links the two
// GPUs (nvlink: always; pairwise_nvlink: GPUs 2i and 2i+1), else PCIe, plus one hop latency.
double pipeline_transfers_ns(int tp, int pp, const std::string& topology, const GpuSpec& gpu,
                             const AnalyticalParams& params, double bytes);

}  // namespace servesim
