#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/hardware/cluster_spec.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Which steps a replica replays from CUDA graphs (vLLM's cudagraph_mode).
//   kDecodeOnly: decode-only steps (vLLM V0; FULL_DECODE_ONLY);
//   kPiecewise:  also steps carrying prefill tokens, as piecewise graphs with attention launched
//                outside them (vLLM V1's default FULL_AND_PIECEWISE).
enum class CudaGraphMode { kDecodeOnly, kPiecewise };
// "decode_only" | "piecewise"; none for anything else.
inline std::optional<CudaGraphMode> cuda_graph_mode_named(std::string_view name) {
  if (name == "decode_only") return CudaGraphMode::kDecodeOnly;
  if (name == "piecewise") return CudaGraphMode::kPiecewise;
  return std::nullopt;
}
inline const char* cuda_graph_mode_name(CudaGraphMode m) {
  return m == CudaGraphMode::kPiecewise ? "piecewise" : "decode_only";
}
// vLLM V1's largest CUDA-graph capture size: min(2 × max_num_seqs, 512) tokens
// (vllm/config: set_cudagraph_sizes); larger steps run eager.
inline std::int64_t vllm_v1_graph_max_tokens(std::int64_t max_num_seqs) {
  return max_num_seqs * 2 < 512 ? max_num_seqs * 2 : 512;
}
// How one step runs.
enum class StepLaunch { kEager, kFullGraph, kPiecewiseGraph };

// One serving replica: a model on `tp × pp` GPUs of one kind. Immutable for a run.
//
// An MoE model's layers may be split two ways over a stage's `tp` GPUs, as the engines do:
// attention data parallelism runs `attention_dp` groups of tp / attention_dp GPUs, each group
// holding its own requests and KV cache and sharding attention by heads inside the group
// (SGLang --enable-dp-attention, vLLM --data-parallel-size, TensorRT-LLM enable_attention_dp);
// expert parallelism spreads the routed experts over `moe_ep` ranks, each sharding its experts'
// intermediate width over tp / moe_ep GPUs (1: experts sharded by TP alone).
struct ReplicaSpec {
  const GpuSpec* gpu = nullptr;
  const ModelSpec* model = nullptr;
  int tp = 1;
  int pp = 1;
  int attention_dp = 1;
  int moe_ep = 1;
  Precision weights = Precision::kBf16;  // GEMMs run at GpuSpec::gemm_flop_per_ns(weights)
  double kv_dtype_bytes = 2.0;           // 1 with an FP8 KV cache (kv_cache_dtype: fp8)
  bool cuda_graphs = true;  // steps replayed from CUDA graphs (vLLM default), per the mode below
  CudaGraphMode cuda_graph_mode = CudaGraphMode::kDecodeOnly;
  std::int64_t cuda_graph_max_tokens = 0;  // steps with more tokens run eager; 0 = no limit
  double power_cap_w = 0;                  // 0 = the GPU's TDP
  // nvlink | pairwise_nvlink | pcie (links between the GPUs); "" = the GPU's own (links()).
  std::string topology;
  // The nodes and links of the run's cluster (its `cluster:` section, else the defaults): a
  // replica larger than a node hands activations between its pipeline stages over the NICs
  // where a boundary crosses nodes.
  ClusterSpec cluster;

  // How a step of `tokens` tokens, `has_prefill` or not, is launched.
  StepLaunch step_launch(bool has_prefill, std::int64_t tokens) const {
    if (!cuda_graphs || (cuda_graph_max_tokens > 0 && tokens > cuda_graph_max_tokens)) {
      return StepLaunch::kEager;
    }
    if (!has_prefill) return StepLaunch::kFullGraph;
    return cuda_graph_mode == CudaGraphMode::kPiecewise ? StepLaunch::kPiecewiseGraph
                                                        : StepLaunch::kEager;
  }

  // The links priced: the topology given, else the GPU's default (GpuSpec::default_topology).
  std::string links() const { return topology.empty() ? gpu->default_topology() : topology; }

  // GPUs sharding one attention group's heads, and one expert's intermediate width.
  int attention_tp() const { return tp / attention_dp; }
  int moe_tp() const { return tp / moe_ep; }
  // Whether the MoE layers are laid out other than by tensor parallelism alone.
  bool moe_parallel() const { return attention_dp > 1 || moe_ep > 1; }

  double weight_bytes_per_param() const { return precision_format(weights).bytes_per_param; }
  double effective_power_cap_w() const { return power_cap_w > 0 ? power_cap_w : gpu->tdp_w; }
};

}  // namespace servesim
