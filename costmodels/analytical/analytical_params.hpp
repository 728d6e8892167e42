#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Light (memory-streaming) kernels of a layer and the step's edges, each priced
// latency (launch floor + serial row walk) against bytes / (bw_fraction · BW).
enum class LightKernel : std::size_t {
  kRmsNorm,
  kLayerNorm,
  kRope,
  kSiluMul,
  kGelu,
  kAdd,
  kKvWrite,
  kEmbedding,
  kSampling,
  kCount
};
inline constexpr std::size_t kNumLightKernels = static_cast<std::size_t>(LightKernel::kCount);
std::string_view light_kernel_name(LightKernel k);

// How cuBLAS launches GEMMs on a GPU: a plain grid of tiles over all SMs
// (Ampere, Ada, sm120), a persistent grid capped at the SM count, or a persistent grid of
// GPC-local thread-block clusters (Hopper).
enum class LaunchModel { kGrid, kPersistent, kCluster };

// How a TP group all-reduces: NCCL's ring (what the Vidur network profiles time), or vLLM's
// custom all-reduce on a fully NVLinked group (csrc/custom_all_reduce.cuh: below
// custom_allreduce_max_bytes, one-stage for p = 2 or small messages, else two-stage; NCCL above).
enum class AllReduceAlgorithm { kRing, kVllmCustom };

// Constants of the analytical model for one GPU: the `analytical:` and `host:` sections of its
// hardware file, which must give every constant (each with its source; no built-in defaults
// stand in for a GPU). The member initializers below only serve code that builds parameters by
// hand (tests, ablations). Plain value type.
struct AnalyticalParams {
  struct Light {
    double floor_ns = 5000;
    double bw_fraction = 0.8;
    // Per-token kernels (vLLM's RMSNorm, SiLU-and-mul, RoPE) run one CTA per token row that
    // walks the row serially: latency per element of that row (0 for elementwise kernels).
    double row_elem_ns = 0;
  };
  // GEMM
  double gemm_efficiency = 0.7;  // tc_util · η_duty at large M (pinned to the SKU's clock)
  double clock_fraction = 1.0;   // f_clk at the default power cap
  double gemm_launch_ns = 2000;
  LaunchModel launch_model = LaunchModel::kGrid;
  int cluster_size = 1;
  int ctas_per_sm = 1;
  std::vector<std::pair<int, int>> tiles = {{256, 128}, {128, 256}, {128, 128},
                                            {128, 64},  {64, 128},  {64, 64}};
  double wave_ns = 0;  // per-wave overhead (prologue/epilogue, scheduling) of a GEMM
  // Tile-dependent occupancy (grid launch): a tm×tn tile keeps tm·tn fp32 accumulators in
  // registers, so c = clamp(⌊accumulator_budget / (tm·tn)⌋, 1, ctas_per_sm) CTAs share an SM
  // (0: c = ctas_per_sm for every tile). An SM running k < c CTAs gets lone_cta_utilization
  // (k = 1, linear up to 1 at k = c) of its tensor throughput; 0 prices a partial round as a full
  // one.
  double accumulator_budget = 0;
  double lone_cta_utilization = 0;
  int split_k_min_k = 256;  // split-K keeps K/s ≥ this
  double knee_q = 3;        // smooth roofline (t_c^q + t_m^q)^(1/q)
  // Memory: η_mem(x) = eta_max · x / (x + x_half), x = working set / L2
  double eta_max = 0.90;
  double x_half = 0.477;
  // Attention
  double prefill_attn_efficiency = 0.6;
  double decode_attn_bw_fraction = 0.7;
  double attn_floor_ns = 8000;
  // Decode attention's tensor-core tile height in query rows (the engine's kernel): each decode
  // fills only its GQA group of them, so the tensor cores run rows / group × the useful FLOPs and
  // draw power for all of them; its time stays the KV stream's. 0: power from useful FLOPs only.
  double decode_attn_mma_rows = 0;
  // Light kernels
  std::array<Light, kNumLightKernels> light{};
  double graph_launch_scale = 0.5;  // launch floors inside a CUDA graph, relative to eager
  // 1024-thread row CTAs resident per SM: max threads per SM / 1024 (2 on sm80/90/100, 1 on
  // sm86/89/120 with 1536 threads); rows beyond SMs · this run in further waves.
  int row_ctas_per_sm = 2;
  // A light kernel's input that the kernel before it just wrote is still in L2 up to
  // light_l2_resident_fraction · L2 bytes, read at light_l2_speedup × the kernel's DRAM stream rate
  // (0: no such reuse).
  double light_l2_resident_fraction = 0;
  double light_l2_speedup = 1;
  // DRAM bytes per SM clock (datasheet bandwidth / (SMs · clock)) of the GPU the light kernels'
  // bw_fraction were fitted on. A kernel streaming below the DRAM ceiling eta_max there was held
  // back on the SM side (bytes in flight per SM over a DRAM latency in clocks: Little's law); a
  // GPU with fewer DRAM bytes per SM clock lifts it closer to the ceiling (light_memory).
  double light_home_bytes_per_sm_clk = 0;
  // Collectives
  double nvlink_efficiency = 0.6;
  double pcie_efficiency = 0.75;
  double hop_latency_ns = 4000;
  double collective_floor_ns = 0;  // per NCCL call: launch and the ranks' start, whatever p
  AllReduceAlgorithm allreduce_algorithm = AllReduceAlgorithm::kRing;
  double custom_allreduce_max_bytes = 8 * 1048576.0;  // vLLM's default max_size
  double custom_allreduce_floor_ns = 0;  // per call of vLLM's kernel: launch and both barriers
  // The sampler beyond the one pass over the logits that the `sampling` light kernel prices, in
  // bytes per (request, vocabulary entry) at that kernel's rate, by what the requests ask for:
  // random sampling (the float copy, temperature, softmax, exponential draw, divide, argmax),
  // top-p/top-k masking (the engine's implementation: vLLM 0.11 sorts the whole vocabulary) and
  // repetition/frequency/presence penalties (token-count tensors over the vocabulary). The
  // engine's business, so an engine profile's `analytical: {sampler: …}` states them; 0 without.
  double sampler_random_bytes = 0;
  double sampler_top_p_bytes = 0;
  double sampler_penalty_bytes = 0;
  // What the requests use (the cost model's `sampling:` section): which of the above apply.
  bool sampling_top_p = false;
  bool sampling_penalties = false;
  // Bytes per (request, vocabulary entry) the sampler streams: the light kernel's 4 (one pass)
  // plus what the requests' sampling asks for.
  double sampler_bytes_per_entry() const {
    return 4 + (sampling_top_p ? sampler_random_bytes + sampler_top_p_bytes : 0) +
           (sampling_penalties ? sampler_penalty_bytes : 0);
  }
  // Host: S(N) = floor + slope·(N−1)
  double host_eager_floor_ns = 2'000'000;
  double host_graph_floor_ns = 500'000;
  double host_slope_ns = 0;

  // The hardware file's `analytical:` and `host:` sections, complete: a missing section or
  // constant is an InputError naming the file and the key expected.
  static AnalyticalParams for_gpu(const GpuSpec& gpu);
  // Sets fields from an `analytical:` / `host:` section (unknown keys are errors). With
  // `complete`, every constant must be present (a hardware file); without, the section overrides
  // what it names (an engine profile).
  void apply_analytical(const ConfigNode& section, bool complete = false);
  void apply_host(const ConfigNode& section, bool complete = false);
};

}  // namespace servesim
