#pragma once

#include <string>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/hardware/cluster_spec.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// The links between the p GPUs of one tensor-parallel group, as a Boost.Graph with a bandwidth
// (bytes/ns, one direction, already scaled by the link's achieved efficiency) on every edge:
//   nvlink           all-to-all NVLink through NVSwitch (DGX/HGX)
//   pairwise_nvlink  NVLink between GPUs 2i and 2i+1, PCIe between every other pair
//   pcie             PCIe between every pair, through the host: the ring's p hops cross one host
//                    bridge at once and share its bandwidth (GpuSpec::host_gb_per_s / p per hop
//                    at most), and a step takes NCCL's PCIe latency, 5.7/3.4 of an NVLink step
//                    (doc/physics.md, "Tensor parallelism over PCIe")
// NCCL runs an all-reduce as the faster of the algorithms the group has (as its tuner does):
//   ring  visits the GPUs in index order, limited by its slowest hop; every GPU sends and receives
//         2(p−1)/p · bytes in 2(p−1) steps: t = floor + 2(p−1)·hop + 2(p−1)/p · bytes / bw
//   nvls  (NVLink SHARP, all-to-all NVLink through a multicast NVSwitch, p > 2 — NCCL turns it
//         off for two GPUs): the switch reduces what the GPUs load and multicasts what they
//         store, so every link carries (p+1)/p · bytes each way in two steps (reduce-scatter,
//         all-gather): t = floor + 2·hop + (p+1)/p · bytes / bw
// floor is the call's fixed cost (launch and the ranks' start), hop one step's latency.
// With AllReduceAlgorithm::kVllmCustom and every pair on NVLink, messages below the custom size
// limit take vLLM's custom kernel instead: each rank reads its peers' buffers directly between two
// barriers (start, end); custom_floor is the kernel's fixed cost (launch and both barriers):
//   one-stage (p = 2, or p ≤ 4 and < 512 KiB, or p ≤ 8 and < 256 KiB):
//     t = custom_floor + (p−1)·bytes / bw
//   two-stage (reduce-scatter + all-gather): t = custom_floor + 2(p−1)/p · bytes / bw
// Immutable after construction.
class TpTopology {
 public:
  enum class Algorithm { kNone, kRing, kNvls, kCustomOneStage, kCustomTwoStage };

  TpTopology(int p, const std::string& kind, const GpuSpec& gpu, const AnalyticalParams& params);

  int size() const { return p_; }
  // Bandwidth of the slowest edge on the ring 0 → 1 → … → p−1 → 0 (bytes/ns).
  double ring_bottleneck_bytes_per_ns() const { return bottleneck_; }
  // The algorithm that moves `bytes` (kNone for p = 1) and its time (0 for p = 1).
  Algorithm algorithm(double bytes) const;
  double all_reduce_ns(double bytes) const;
  // NCCL's ring all-gather of `bytes` in all (each GPU holds bytes / p): every GPU sends and
  // receives (p−1)/p · bytes in p−1 steps: t = floor + (p−1)·hop + (p−1)/p · bytes / bw (0 for
  // p = 1).
  double all_gather_ns(double bytes) const;
  static const char* algorithm_name(Algorithm a);
  // Whether NCCL may run NVLS on this group (it then takes the faster of ring and NVLS).
  bool has_nvls() const { return nvls_; }

 private:
  double ring_ns(double bytes) const;
  double nvls_ns(double bytes) const;

  int p_;
  double bottleneck_ = 0;
  double hop_latency_ns_ = 0;
  double floor_ns_ = 0;
  double custom_floor_ns_ = 0;
  bool nvls_ = false;    // NCCL may run NVLS here (multicast NVSwitch, all NVLink, p > 2)
  bool custom_ = false;  // vLLM's custom all-reduce applies (algorithm chosen, all NVLink)
  double custom_max_bytes_ = 0;
};

// Pipeline parallelism: the time to hand a step's activations (`bytes`: in vLLM the hidden
// states and the residual, tokens × hidden each) across the boundary from stage `stage` to the
// next, as vLLM's send_tensor_dict does with its TP group as all-gather group: rank x of the
// stage sends the x-th of tp slices to rank x of the next (all ranks at once, each a lone
// GPU-to-GPU copy of bytes / tp, ClusterSpec::copy_ns: inside a node over NVLink when the
// topology links the two GPUs, else PCIe; through the NICs where a replica larger than a node
// crosses one there), and the next stage all-gathers the slices over its own group. GPU g of
// the replica is TP rank g % tp of stage g / tp; `group` is a stage's TP group.
double pipeline_boundary_ns(const TpTopology& group, int pp, int stage, const std::string& topology,
                            const GpuSpec& gpu, const ClusterSpec& cluster, double bytes);
// Every boundary once, in sequence (one step passes them all).
double pipeline_transfers_ns(const TpTopology& group, int pp, const std::string& topology,
                             const GpuSpec& gpu, const ClusterSpec& cluster, double bytes);

}  // namespace servesim
