#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/hardware/precision.hpp"
#include "sim/util/units.hpp"

namespace servesim {

// Datasheet description of one GPU SKU, read from configs/hardware/<name>.yaml. Units are in the
// field names. Cost models that need more constants (efficiencies, tile ladders, power model)
// read their own section of the same file through `file`, which keeps sources beside numbers.
struct GpuSpec {
  std::string name;                  // catalog key, e.g. "h200" (the file's stem)
  std::string display_name;          // e.g. "NVIDIA H200 SXM 141GB"
  std::vector<std::string> aliases;  // other spellings users and measured runs use ("H200")
  std::string arch;                  // ampere | ada | hopper | blackwell
  int sms = 0;
  std::vector<int> gpc_sms;  // SMs per GPC (sums to sms); empty when unknown
  double boost_clock_mhz = 0;
  double base_clock_mhz = 0;
  double bf16_tflops = 0;  // dense
  double fp8_tflops = 0;   // dense; 0 when the SKU has no FP8 tensor cores
  // Dense NVFP4/MXFP4 (block-scaled) rate; 0 when the SKU has no FP4 tensor cores (before
  // Blackwell).
  double fp4_tflops = 0;
  // The dense peaks in the unit the physics prices in.
  double bf16_flop_per_ns() const { return bf16_tflops * kFlopPerNsPerTflops; }
  double fp8_flop_per_ns() const { return fp8_tflops * kFlopPerNsPerTflops; }
  double fp4_flop_per_ns() const { return fp4_tflops * kFlopPerNsPerTflops; }
  // The dense tensor-core rate of a GEMM over weights stored as `p`:
  //   bf16 and int4 (weight-only W4A16, dequantized in the GEMM mainloop): the bf16 rate;
  //   fp8 and fp8_block (W8A8): the FP8 rate;
  //   nvfp4 (W4A4): the FP4 rate;
  //   mxfp4: W4A8 (activations in MXFP8) on GPUs with block-scaled FP4/FP8 tensor cores
  //   (Blackwell), at the FP8 rate; weight-only (W4A16) elsewhere, at the bf16 rate.
  // A format precision_problem() refuses prices at the bf16 rate (a tool pricing one kernel).
  double gemm_flop_per_ns(Precision p) const;
  // Why this GPU cannot run weights stored as `p` ("" when it can): FP8 needs FP8 tensor cores,
  // NVFP4 FP4 tensor cores.
  std::string precision_problem(Precision p) const;
  double memory_gb = 0;  // decimal GB
  // What the device reports (nvidia-smi total), when it differs from memory_gb read as GiB
  // (GDDR parts with ECC on); 0 = unknown, memory_gb GiB is used.
  double device_memory_mib = 0;
  double device_memory_bytes() const;
  double memory_bw_gb_per_s = 0;
  // DRAM technology (hbm2e, hbm3, hbm3e, gddr6, gddr6x, gddr7; "" when the file does not say):
  // with `arch`, the class a GPU's prices were or were not checked on.
  std::string memory_type;
  bool gddr() const { return memory_type.starts_with("gddr"); }
  double l2_mb = 0;  // binary MiB, as the device reports
  double l2_bytes() const { return l2_mb * 1048576.0; }
  double tdp_w = 0;
  double min_power_w = 0;
  double nvlink_gb_per_s = 0;  // per GPU, bidirectional; 0 when absent
  // NVLink joins the cards in pairs through a bridge (PCIe boards: A40, H100 PCIe), not all of
  // a node's GPUs through NVSwitch: only pairwise_nvlink (or pcie) can describe their links.
  bool nvlink_bridge = false;
  // The NVSwitch reduces and multicasts in the switch (NVLink SHARP: third-generation NVSwitch
  // and later, HGX H100/H200/B200), so NCCL can run an all-reduce of more than two GPUs as NVLS.
  bool nvswitch_multicast = false;
  double pcie_gb_per_s = 0;  // per direction
  // How a node of these GPUs is wired when a config names no topology (the hardware file's
  // `interconnect.kind`): "nvswitch" (NVLink all-to-all through NVSwitch), "nvlink_bridge"
  // (bridged pairs, PCIe between pairs) or "pcie" (PCIe only, through the host). "" for specs
  // built in code, which then take the wiring their NVLink fields imply.
  std::string interconnect;
  int pcie_gen = 0;  // the PCIe generation of the card's x16 link; 0 when unknown
  // Achieved peer-to-peer bandwidth (GB/s, per direction) of the host bridge (CPU root complex,
  // PCIe switches, the link between sockets) that a ring over PCIe alone crosses: the ring's p
  // simultaneous hops share it. 0 = no such limit (specs built in code).
  double host_gb_per_s = 0;
  ConfigNode file;  // the whole hardware file, for plug-in sections
  // Where the file's cost-model constants come from ("transferred from the a100-80gb fit …") and
  // what this GPU's prices were scored against, with the figure (empty: nothing measured): the
  // `provenance:` section, which the tools print beside their answers. "" when the file has none.
  std::string provenance;
  std::vector<std::string> validated;
  // The analytical model's MLP-block MAPE on this GPU's measured profile (%), 0 when none was
  // measured: the model's stated uncertainty for this GPU (costmodel rank's tie rule).
  double block_mape_pct = 0;

  // Why a board power cap of `watts` cannot be set ("" when it can): as `nvidia-smi -pl`, within
  // [min_power_w (when known), tdp_w].
  std::string power_cap_problem(double watts) const;
  // The catalog name, then the aliases: every name a profile folder of this GPU may carry.
  std::vector<std::string> names() const {
    std::vector<std::string> n{name};
    n.insert(n.end(), aliases.begin(), aliases.end());
    return n;
  }
  // Whether `n` is the catalog name or an alias, in any case.
  bool answers_to(const std::string& n) const;
  // The links between a replica's GPUs when the config names none: NVLink all-to-all where this
  // GPU has it through NVSwitch, pairs where a bridge joins two cards, else PCIe.
  const char* default_topology() const {
    if (interconnect == "nvswitch") return "nvlink";
    if (interconnect == "nvlink_bridge") return "pairwise_nvlink";
    if (interconnect == "pcie" || nvlink_gb_per_s <= 0) return "pcie";
    return nvlink_bridge ? "pairwise_nvlink" : "nvlink";
  }
  // One line for reports: the wiring, its links and the host bridge ("pcie: PCIe Gen4 x16 32
  // GB/s per direction, host bridge 112 GB/s shared by a ring's hops").
  std::string interconnect_summary() const;
  // Why a replica of this GPU cannot use `topology` ("" when it can): the name must be known,
  // NVLink topologies need a GPU with NVLink, and all-to-all NVLink a GPU without a bridge.
  std::string topology_problem(std::string_view topology) const;
  // Whether GPUs a and b of one replica (global ranks, TP-major) talk over NVLink under
  // `topology` (else PCIe): nvlink links every pair, pairwise_nvlink pairs 2i and 2i+1.
  bool nvlink_between(int a, int b, std::string_view topology) const {
    if (nvlink_gb_per_s <= 0) return false;
    if (topology == "pairwise_nvlink") return a / 2 == b / 2;
    return topology == "nvlink";
  }
  // Whether a ring 0 → 1 → … → p−1 → 0 of p ≥ 2 GPUs runs on NVLink at every hop (false for
  // p ≤ 1: no ring).
  bool ring_on_nvlink(int p, std::string_view topology) const {
    if (p <= 1) return false;
    for (int a = 0; a + 1 < p; ++a) {
      if (!nvlink_between(a, a + 1, topology)) return false;
    }
    return p == 2 || nvlink_between(p - 1, 0, topology);
  }
};

// Architecture of one model, read from configs/models/<org>/<name>.yaml.
struct ModelSpec {
  std::string name;  // Hugging Face id, e.g. "meta-llama/Llama-3.1-8B"
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;  // dense MLP, or per expert for MoE
  int vocab_size = 0;
  int max_position_embeddings = 0;
  bool gated_mlp = true;        // SwiGLU gate+up (3 matrices) vs fc1/fc2 (2 matrices)
  bool layer_norm = false;      // LayerNorm (true) or RMSNorm (false)
  bool parallel_block = false;  // phi-2 style: attention and MLP share one norm
  bool attention_bias = false;
  int num_experts = 0;  // 0 for dense models
  int experts_per_token = 0;
  int shared_expert_intermediate = 0;  // Llama-4-style shared expert, 0 when none
  int moe_layer_interval = 1;          // every n-th layer is MoE (Llama-4 Maverick style); 1 = all
  // Leading layers with a dense MLP before the first MoE layer (HF first_k_dense_replace,
  // DeepSeek-V3: 3); 0 = none.
  int first_dense_layers = 0;
  // MLP width of the dense layers (between MoE layers, or before the first); 0: the same as
  // intermediate_size. Only meaningful with moe_layer_interval > 1 or first_dense_layers > 0.
  int dense_intermediate_size = 0;
  // MLA (DeepSeek-V2/V3): head_dim is qk_nope_head_dim = v_head_dim, the q/k heads are
  // head_dim + qk_rope_head_dim wide.
  int kv_lora_rank = 0;      // compressed KV width; 0 for standard attention
  int qk_rope_head_dim = 0;  // decoupled rope part stored with the latent
  int q_lora_rank = 0;       // compressed query width; 0 = a full query projection
  bool tie_word_embeddings = false;
  // Sliding-window attention: layers whose attention sees only the last `sliding_window` tokens
  // (and whose cache the engines free beyond it). Every layer but each
  // sliding_window_pattern-th slides (HF layer_types / Gemma's sliding_window_pattern: gpt-oss 2,
  // layers 0, 2, 4, … slide); 1: every layer slides; 0 or no window: none.
  int sliding_window = 0;
  int sliding_window_pattern = 0;
  // Hybrid linear attention (Qwen3-Next, Qwen3.5: Gated DeltaNet): every
  // full_attention_interval-th layer has full attention, the others a linear-attention layer
  // with `linear_key_heads` and `linear_value_heads` heads of the given widths, a causal
  // convolution of `linear_conv_kernel` taps over q, k and v, and a recurrent state of value
  // heads × key dim × value dim per request instead of a KV cache. 0: no linear layers.
  int full_attention_interval = 0;
  int linear_key_heads = 0;
  int linear_value_heads = 0;
  int linear_key_head_dim = 0;
  int linear_value_head_dim = 0;
  int linear_conv_kernel = 0;
  // The full-attention query projection also yields a sigmoid gate on the output (HF
  // attn_output_gate: q_proj twice as wide).
  bool attention_output_gate = false;
  // FP8 checkpoints of this model keep the attention q/k/v/o projections in bf16 (as
  // compressed-tensors recipes that quantize only the MLP/experts do).
  bool fp8_skips_attention = false;
  ConfigNode file;

  bool is_moe() const { return num_experts > 0; }
  // Whether layer i (0-based) attends through the sliding window.
  bool is_sliding_layer(int i) const {
    if (sliding_window <= 0 || sliding_window_pattern <= 0) return false;
    return sliding_window_pattern == 1 || (i + 1) % sliding_window_pattern != 0;
  }
  // Layers with a sliding window.
  int sliding_layers() const;
  // Whether layer i (0-based) is a linear-attention layer (all but every
  // full_attention_interval-th), and how many are.
  bool is_linear_layer(int i) const {
    return full_attention_interval > 0 && (i + 1) % full_attention_interval != 0;
  }
  int linear_layers() const;
  // The weights of one linear-attention layer: the q/k/v/z and beta/alpha input projections,
  // the convolution and the output projection.
  double linear_attention_params() const;
  // The recurrent state of one linear-attention layer per request (elements), whole: the value
  // heads' key dim × value dim matrices and the convolution's last kernel − 1 inputs.
  double linear_state_elems() const;
  // The attention weights of layer i: its linear-attention layer's or attention_params_per_layer.
  double attention_params_at(int layer) const;
  // Layers with routed experts: every moe_layer_interval-th layer (HF interleave_moe_layer_step:
  // layers s−1, 2s−1, …), all of them when the interval is 1, past the first_dense_layers; 0 for
  // a dense model.
  int moe_layers() const;
  // MLP width of a dense layer.
  int dense_mlp_width() const {
    return dense_intermediate_size > 0 ? dense_intermediate_size : intermediate_size;
  }
  // Whether layer i (0-based) has routed experts: every moe_layer_interval-th layer past the
  // first_dense_layers.
  bool is_moe_layer(int i) const {
    return is_moe() && i >= first_dense_layers &&
           (i + 1) % (moe_layer_interval > 1 ? moe_layer_interval : 1) == 0;
  }
  // Parameters of one layer (attention and MLP; routed experts, router and shared expert for an
  // MoE layer), and the part of them FP8 checkpoints keep in bf16 (router; attention where
  // fp8_skips_attention).
  double layer_params(bool moe) const;
  double layer_unquantized_params(bool moe) const;
  // Parameter count of the weights (embeddings and LM head included).
  double num_params() const;
  // The q/k/v/o projection weights of one layer; with MLA its q (low-rank when q_lora_rank),
  // joint KV down-projection, KV up-projection (nope keys and values) and output.
  double attention_params_per_layer() const;
  // The parameters FP8 checkpoints keep in bf16: embeddings, LM head and MoE routers (the usual
  // recipes, e.g. llm-compressor's FP8-dynamic, quantize the linear layers of the blocks only),
  // and the attention projections where the model file says fp8_skips_attention.
  double unquantized_params() const;
  // Bytes of the whole model's weights stored at `p` (its unquantized parameters in bf16).
  double weight_bytes(Precision p) const;
  // KV-cache bytes stored per token per layer on one GPU (both K and V), before TP split.
  double kv_bytes_per_token_per_layer(double dtype_bytes) const;
  // Why tensor parallelism `tp` cannot shard this model ("" when it can): every rank needs whole
  // attention heads.
  std::string tp_problem(int tp) const;
  // Why `ep` expert-parallel ranks and `attention_dp` attention groups cannot lay out this model
  // ("" when they can): both split MoE models only (a dense model's data parallelism is more
  // replicas), and every rank needs whole experts.
  std::string ep_problem(int ep, int attention_dp) const;
  // Why `pp` pipeline stages cannot split this model ("" when they can): every stage needs a
  // layer.
  std::string pp_problem(int pp) const;
};

}  // namespace servesim
