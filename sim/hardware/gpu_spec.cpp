#include "sim/hardware/gpu_spec.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/hardware/catalog.hpp"

namespace servesim {

double GpuSpec::gemm_flop_per_ns(Precision p) const {
  switch (p) {
    case Precision::kFp8:
    case Precision::kFp8Block:
      if (fp8_tflops > 0) return fp8_flop_per_ns();
      break;
    case Precision::kNvfp4:
      if (fp4_tflops > 0) return fp4_flop_per_ns();
      break;
    case Precision::kMxfp4:
      return fp4_tflops > 0 ? fp8_flop_per_ns() : bf16_flop_per_ns();
    case Precision::kBf16:
    case Precision::kInt4:
      break;
  }
  return bf16_flop_per_ns();
}

std::string GpuSpec::precision_problem(Precision p) const {
  const bool fp8 = p == Precision::kFp8 || p == Precision::kFp8Block;
  if (fp8 && fp8_tflops <= 0) {
    return fmt::format("GPU '{}' has no FP8 tensor cores (expected bf16, int4 or mxfp4 weights)",
                       name);
  }
  if (p == Precision::kNvfp4 && fp4_tflops <= 0) {
    return fmt::format(
        "GPU '{}' has no FP4 tensor cores: nvfp4 needs Blackwell (expected {} weights)", name,
        fp8_tflops > 0 ? "bf16, fp8, fp8_block, int4 or mxfp4" : "bf16, int4 or mxfp4");
  }
  return "";
}

double ModelSpec::attention_params_per_layer() const {
  const double h = hidden_size;
  if (kv_lora_rank > 0) {
    const double heads = num_heads;
    const double qk = static_cast<double>(head_dim) + qk_rope_head_dim;
    const double q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank * heads * qk : h * heads * qk;
    return q + h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank * heads * 2.0 * head_dim +
           heads * head_dim * h;
  }
  const double q_width = static_cast<double>(num_heads) * head_dim;
  const double kv_width = static_cast<double>(num_kv_heads) * head_dim;
  const double q_out = attention_output_gate ? 2 * q_width : q_width;
  return h * q_out + 2.0 * h * kv_width + q_width * h;
}

double ModelSpec::layer_params(bool moe) const {
  const double h = hidden_size;
  const double matrices = gated_mlp ? 3.0 : 2.0;
  const double mlp = moe ? num_experts * matrices * h * intermediate_size + h * num_experts +
                               matrices * h * shared_expert_intermediate
                         : matrices * h * dense_mlp_width();
  return attention_params_per_layer() + mlp;
}

double ModelSpec::layer_unquantized_params(bool moe) const {
  return (moe ? static_cast<double>(hidden_size) * num_experts : 0.0) +
         (fp8_skips_attention ? attention_params_per_layer() : 0.0);
}

double ModelSpec::num_params() const {
  const int moe = moe_layers();
  const double embeddings =
      static_cast<double>(vocab_size) * hidden_size * (tie_word_embeddings ? 1 : 2);
  const double linear =
      full_attention_interval > 0
          ? linear_layers() * (linear_attention_params() - attention_params_per_layer())
          : 0.0;
  return moe * layer_params(true) + (num_layers - moe) * layer_params(false) + embeddings + linear;
}

int ModelSpec::sliding_layers() const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += is_sliding_layer(i) ? 1 : 0;
  return n;
}

int ModelSpec::linear_layers() const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += is_linear_layer(i) ? 1 : 0;
  return n;
}

double ModelSpec::linear_attention_params() const {
  const double h = hidden_size;
  const double keys = static_cast<double>(linear_key_heads) * linear_key_head_dim;
  const double values = static_cast<double>(linear_value_heads) * linear_value_head_dim;
  const double conv = (2 * keys + values) * linear_conv_kernel;
  return h * (2 * keys + 2 * values + 2.0 * linear_value_heads) + conv + values * h;
}

double ModelSpec::linear_state_elems() const {
  const double keys = static_cast<double>(linear_key_heads) * linear_key_head_dim;
  const double values = static_cast<double>(linear_value_heads) * linear_value_head_dim;
  return static_cast<double>(linear_value_heads) * linear_key_head_dim * linear_value_head_dim +
         (2 * keys + values) * std::max(0, linear_conv_kernel - 1);
}

double ModelSpec::attention_params_at(int layer) const {
  return is_linear_layer(layer) ? linear_attention_params() : attention_params_per_layer();
}

int ModelSpec::moe_layers() const {
  if (!is_moe()) return 0;
  if (first_dense_layers > 0) {
    int n = 0;
    for (int i = 0; i < num_layers; ++i) n += is_moe_layer(i) ? 1 : 0;
    return n;
  }
  return num_layers / std::max(1, moe_layer_interval);
}

double ModelSpec::unquantized_params() const {
  const int moe = moe_layers();
  const double linear =
      full_attention_interval > 0 && fp8_skips_attention
          ? linear_layers() * (linear_attention_params() - attention_params_per_layer())
          : 0.0;
  return static_cast<double>(vocab_size) * hidden_size * (tie_word_embeddings ? 1 : 2) +
         moe * layer_unquantized_params(true) +
         (num_layers - moe) * layer_unquantized_params(false) + linear;
}

double ModelSpec::weight_bytes(Precision p) const {
  const double unquantized = p != Precision::kBf16 ? unquantized_params() : 0.0;
  return (num_params() - unquantized) * precision_format(p).bytes_per_param + unquantized * 2.0;
}

std::string ModelSpec::tp_problem(int tp) const {
  if (tp >= 1 && num_heads % tp == 0) return "";
  return fmt::format("{} does not divide the {} attention heads of {}", tp, num_heads, name);
}

std::string ModelSpec::ep_problem(int ep, int attention_dp) const {
  if ((ep > 1 || attention_dp > 1) && !is_moe()) {
    return fmt::format(
        "{} is a dense model: expert parallelism and attention data parallelism split MoE "
        "models (expected more replicas: count)",
        name);
  }
  if (ep > 1 && num_experts % ep != 0) {
    return fmt::format("ep {} does not divide the {} experts of {}", ep, num_experts, name);
  }
  return "";
}

std::string ModelSpec::pp_problem(int pp) const {
  if (pp >= 1 && pp <= num_layers) return "";
  return fmt::format("{} pipeline stages exceed the {} layers of {} (expected 1 to {})", pp,
                     num_layers, name, num_layers);
}

double GpuSpec::device_memory_bytes() const {
  return device_memory_mib > 0 ? device_memory_mib * 1048576.0 : memory_gb * 1073741824.0;
}

std::string GpuSpec::power_cap_problem(double watts) const {
  if (watts >= min_power_w && watts <= tdp_w) return "";
  return fmt::format("{} W is outside {}'s power limits (expected {} to {} W)", watts, name,
                     min_power_w, tdp_w);
}

std::string GpuSpec::topology_problem(std::string_view topology) const {
  if (topology != "nvlink" && topology != "pairwise_nvlink" && topology != "pcie") {
    return fmt::format("unknown topology '{}' (known: nvlink, pairwise_nvlink, pcie)", topology);
  }
  if (topology != "pcie" && nvlink_gb_per_s <= 0) {
    return fmt::format(
        "{} has no NVLink (its hardware file gives no nvlink_gb_per_s); expected "
        "topology pcie",
        name);
  }
  if (topology == "nvlink" && nvlink_bridge) {
    return fmt::format(
        "{} links only pairs of cards, through an NVLink bridge (nvlink_bridge in its hardware "
        "file); expected topology pairwise_nvlink or pcie",
        name);
  }
  return "";
}

std::string GpuSpec::interconnect_summary() const {
  const std::string kind = interconnect.empty() ? "unspecified" : interconnect;
  const std::string gen = pcie_gen > 0 ? fmt::format(" Gen{}", pcie_gen) : "";
  std::string out = fmt::format("{} (default topology {}): PCIe{} x16 {} GB/s per direction", kind,
                                default_topology(), gen, pcie_gb_per_s);
  if (nvlink_gb_per_s > 0) {
    out += fmt::format(", NVLink {} GB/s bidirectional{}", nvlink_gb_per_s,
                       nvlink_bridge ? " through a 2-GPU bridge" : " through NVSwitch");
  }
  if (host_gb_per_s > 0) {
    out += fmt::format(", host bridge {} GB/s per direction shared by a PCIe ring's hops",
                       host_gb_per_s);
  }
  return out;
}

double ModelSpec::kv_bytes_per_token_per_layer(double dtype_bytes) const {
  if (kv_lora_rank > 0) return (kv_lora_rank + qk_rope_head_dim) * dtype_bytes;
  return 2.0 * num_kv_heads * head_dim * dtype_bytes;
}

bool GpuSpec::answers_to(const std::string& n) const {
  const std::string want = lowercase(n);
  const std::vector<std::string> all = names();
  return std::any_of(all.begin(), all.end(),
                     [&](const std::string& m) { return lowercase(m) == want; });
}

}  // namespace servesim
