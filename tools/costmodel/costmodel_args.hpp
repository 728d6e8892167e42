#pragma once

#include <string>
#include <vector>

#include "sim/hardware/link_network.hpp"

namespace servesim {

// Arguments of the `costmodel` tool's subcommands (see tools/costmodel/main.cpp).
struct CostmodelArgs {
  std::string profiles;
  std::string network;
  std::string gpu;
  std::string model;
  std::string hardware_file;
  // validate/ablate/crossval/network: an engine profile (the software stack that produced the
  // profile: configs/engines/<name>.yaml or a file) applied over the hardware file's constants
  std::string engine;
  std::string write_file;
  std::string rows_file;  // validate: per-row residual CSV
  std::string cost_model_yaml = "kind: analytical";
  bool json = false;
  bool per_tp = false;
  bool eager = false;
  std::string precision = "bf16";  // predict: bf16 | fp16 | fp8 weights
  // predict: the replica's cuda_graph_mode; "" = the cost model's engine profile's, else
  // decode_only (as simulate does)
  std::string graph_mode;
  // predict: cuda_graph_max_tokens (0 = no limit); −1 = as simulate: vLLM V1's largest capture
  // size min(2 max_num_seqs, 512) for piecewise graphs, no limit for decode_only
  int graph_max_tokens = -1;
  int max_num_seqs = 128;  // predict: sizes that default capture size (simulate's default)
  int tp = 1;
  int pp = 1;
  int attention_dp = 1;    // predict: attention data-parallel groups within tp (MoE models)
  int ep = 1;              // predict: expert-parallel ranks within tp (MoE models)
  std::string topology;    // predict: "" = the GPU's default
  double power_cap_w = 0;  // predict: 0 = the GPU's TDP
  // power: board caps (W) and GEMM token counts M of a K × N projection GEMM (default: Llama-2-7B's
  // fused q/k/v, K 4096, N 6144)
  std::vector<double> caps;
  std::vector<int> token_counts;
  int gemm_k = 4096;
  int gemm_n = 6144;
  // place: the pieces of each mix, as prefill-chunk token counts ("16384,64x8": one 16384-token
  // chunk and eight of 64); one GPU per entry of `caps`
  std::vector<std::string> mixes;
  // place --bands: judge the comparison again under draws of the GPU's measured cap sweep
  bool bands = false;
  int band_draws = 5;
  std::string cap_sweeps;  // "" = data/measured/cap_sweeps.yaml
  int prefill_tokens = 0;
  int context = 0;
  int decodes = 0;
  // kv-transfer and predict: the cluster's nodes and links (ClusterSpec's defaults unless given)
  ClusterSpec cluster;
};

// The subcommands' backends, one file each in tools/costmodel/. Each returns the text to print;
// bad input throws InputError; none prints.
std::string run_validate(const CostmodelArgs& args);
std::string run_ablate(const CostmodelArgs& args);
std::string run_fit(const CostmodelArgs& args);
// Leave-one-group-out: each model's rows priced with the constants `fit` finds on the files of
// the models that share no projection GEMM shape with it, beside the in-sample error of the fit
// on all of them. Kernels no training model runs take a sibling's constants (LayerNorm as
// RMSNorm, GELU as SiLU-and-mul) or are reported as in sample.
std::string run_crossval(const CostmodelArgs& args);
std::string run_network(const CostmodelArgs& args);
// A KV copy between two GPUs as disaggregated serving prices it, against send_recv.csv.
std::string run_kv_transfer(const CostmodelArgs& args);
std::string run_predict(const CostmodelArgs& args);
// The power model on one GEMM shape (costmodels/README.md, "costmodel power"): clock, board power
// and TFLOP/s per (cap, M), the penalty of the lowest cap against the highest and the cap → clock
// slope per M.
std::string run_power(const CostmodelArgs& args);
// Power-aware placement (costmodels/README.md, "costmodel place"): each mix's prefill chunks placed
// on one GPU per cap, priced as engine steps of the cost model: `aware` places by the capped
// prices, `blind` by each GPU's uncapped (TDP) price, `oracle` enumerates every placement; all
// judged by the makespan under the capped prices.
std::string run_place(const CostmodelArgs& args);

}  // namespace servesim
