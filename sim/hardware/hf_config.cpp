#include "sim/hardware/hf_config.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

// How an architecture names its MoE fields: the routed expert count, the expert width, and the
// shared expert (its width key, or a count of experts of the expert width).
struct MoeKeys {
  const char* experts = nullptr;  // nullptr: a dense architecture
  const char* width = "intermediate_size";
  const char* shared_width = nullptr;
  const char* shared_count = nullptr;
};

enum class Family { kDense, kMoe, kDeepseek, kGptOss, kHybrid };

struct Architecture {
  Family family = Family::kDense;
  MoeKeys moe;
  bool qkv_bias = false;  // the architecture's attention projections carry a bias
};

const std::map<std::string, Architecture>& architectures() {
  static const std::map<std::string, Architecture> k{
      {"LlamaForCausalLM", {}},
      {"MistralForCausalLM", {}},
      {"Qwen2ForCausalLM", {Family::kDense, {}, true}},
      {"Qwen3ForCausalLM", {}},
      {"MixtralForCausalLM", {Family::kMoe, {"num_local_experts"}}},
      {"MiniMaxM2ForCausalLM", {Family::kMoe, {"num_local_experts"}}},
      {"Qwen2MoeForCausalLM",
       {Family::kMoe,
        {"num_experts", "moe_intermediate_size", "shared_expert_intermediate_size"},
        true}},
      {"Qwen3MoeForCausalLM", {Family::kMoe, {"num_experts", "moe_intermediate_size"}}},
      {"DeepseekV2ForCausalLM",
       {Family::kDeepseek,
        {"n_routed_experts", "moe_intermediate_size", nullptr, "n_shared_experts"}}},
      {"DeepseekV3ForCausalLM",
       {Family::kDeepseek,
        {"n_routed_experts", "moe_intermediate_size", nullptr, "n_shared_experts"}}},
      {"GptOssForCausalLM", {Family::kGptOss, {"num_local_experts"}}},
      {"Qwen3NextForCausalLM",
       {Family::kHybrid,
        {"num_experts", "moe_intermediate_size", "shared_expert_intermediate_size"}}},
      {"Qwen3_5MoeForCausalLM",
       {Family::kHybrid,
        {"num_experts", "moe_intermediate_size", "shared_expert_intermediate_size"}}},
      {"Qwen3_5MoeForConditionalGeneration",
       {Family::kHybrid,
        {"num_experts", "moe_intermediate_size", "shared_expert_intermediate_size"}}},
  };
  return k;
}

class Reader {
 public:
  Reader(std::string path, const nlohmann::json& j) : path_(std::move(path)), j_(j) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", path_, field, what));
  }
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const nlohmann::json& at(const char* key) const { return j_.at(key); }
  // A whole number ≥ 0 (≥ 1 unless `zero_ok`), required.
  long long count(const char* key, bool zero_ok = false) const {
    if (!has(key)) fail(key, "missing (the physics needs it)");
    const nlohmann::json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<long long>() < (zero_ok ? 0 : 1)) {
      fail(key, zero_ok ? "expected a whole number ≥ 0" : "expected a whole number ≥ 1");
    }
    return v.get<long long>();
  }
  long long count_or(const char* key, long long fallback) const {
    return has(key) ? count(key, true) : fallback;
  }
  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) fail(key, "expected true or false");
    return j_.at(key).get<bool>();
  }

 private:
  std::string path_;
  const nlohmann::json& j_;
};

// Layer kinds as a list of strings (HF layer_types): the indexes of those equal to `kind`.
std::vector<bool> layer_kinds(const Reader& r, const char* key, const std::string& kind,
                              long long layers) {
  const nlohmann::json& t = r.at(key);
  if (!t.is_array() || static_cast<long long>(t.size()) != layers) {
    r.fail(key, fmt::format("expected a list of {} layer types", layers));
  }
  std::vector<bool> out;
  for (const auto& v : t) {
    if (!v.is_string()) r.fail(key, "expected layer type names");
    out.push_back(v.get<std::string>() == kind);
  }
  return out;
}

}  // namespace

std::string hf_config_yaml(const std::string& path, const std::string& name_in) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: no such file (expected a config.json)", path));
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: not JSON ({})", path, e.what()));
  }
  if (!root.is_object()) throw InputError(fmt::format("{}: expected a JSON object", path));
  const Reader top(path, root);
  if (!top.has("architectures") || !root.at("architectures").is_array() ||
      root.at("architectures").empty() || !root.at("architectures")[0].is_string()) {
    top.fail("architectures", "missing (expected the model class, e.g. [\"LlamaForCausalLM\"])");
  }
  const std::string arch_name = root.at("architectures")[0].get<std::string>();
  const auto found = architectures().find(arch_name);
  if (found == architectures().end()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : architectures()) known.push_back(k);
    top.fail("architectures", fmt::format("unknown architecture '{}' (known: {})", arch_name,
                                          fmt::join(known, ", ")));
  }
  const Architecture& arch = found->second;
  // A vision-language file keeps the language model's fields under text_config.
  const nlohmann::json& j = root.contains("text_config") && root.at("text_config").is_object()
                                ? root.at("text_config")
                                : root;
  const Reader r(path, j);

  std::string name = name_in;
  if (name.empty() && top.has("_name_or_path") && root.at("_name_or_path").is_string()) {
    name = root.at("_name_or_path").get<std::string>();
  }
  if (name.empty()) name = std::filesystem::path(path).parent_path().filename().string();
  if (name.empty()) top.fail("_name_or_path", "missing: give the model's name");

  const long long layers = r.count("num_hidden_layers");
  const long long hidden = r.count("hidden_size");
  const long long heads = r.count("num_attention_heads");
  long long kv_heads = r.count_or("num_key_value_heads", heads);
  long long head_dim = r.count_or("head_dim", hidden / heads);
  std::string y;
  const auto line = [&y](const std::string& key, auto value) {
    y += fmt::format("{}: {}\n", key, value);
  };
  y += fmt::format("# {}: written by `costmodel import-model` from its config.json.\n", name);
  line("name", name);
  line("num_layers", layers);
  line("hidden_size", hidden);
  line("num_heads", heads);

  std::vector<std::string> notes;
  if (arch.family == Family::kDeepseek) {
    // MLA: head_dim is the nope part, which the values share.
    const long long nope = r.count("qk_nope_head_dim");
    if (r.count("v_head_dim") != nope) {
      r.fail("v_head_dim", "an MLA value head unlike its nope key head is not priced");
    }
    kv_heads = heads;
    head_dim = nope;
  }
  line("num_kv_heads", kv_heads);
  line("head_dim", head_dim);
  const MoeKeys& moe = arch.moe;
  line("intermediate_size", r.count(moe.experts != nullptr ? moe.width : "intermediate_size"));
  line("vocab_size", r.count("vocab_size"));
  line("max_position_embeddings", r.count("max_position_embeddings"));
  line("gated_mlp", "true");
  line("norm", "rmsnorm");
  line("parallel_block", "false");
  line("attention_bias", r.flag("attention_bias", arch.qkv_bias) ? "true" : "false");
  line("tie_word_embeddings", r.flag("tie_word_embeddings", false) ? "true" : "false");
  if (moe.experts != nullptr) {
    line("num_experts", r.count(moe.experts));
    line("experts_per_token", r.count("num_experts_per_tok"));
    long long shared = 0;
    if (moe.shared_width != nullptr) shared = r.count_or(moe.shared_width, 0);
    if (moe.shared_count != nullptr) shared = r.count_or(moe.shared_count, 0) * r.count(moe.width);
    line("shared_expert_intermediate", shared);
    const long long step = r.count_or("decoder_sparse_step", 1);
    line("moe_layer_interval", step);
    if (r.has("mlp_only_layers") &&
        (!r.at("mlp_only_layers").is_array() || !r.at("mlp_only_layers").empty())) {
      r.fail("mlp_only_layers", "dense layers at chosen positions are not priced (expected [])");
    }
    if (arch.family == Family::kDeepseek) {
      if (r.count_or("moe_layer_freq", 1) != 1) {
        r.fail("moe_layer_freq", "MoE layers at an interval are not priced here (expected 1)");
      }
      const long long dense = r.count_or("first_k_dense_replace", 0);
      if (dense > 0) {
        line("first_dense_layers", dense);
        line("dense_intermediate_size", r.count("intermediate_size"));
      }
    }
  }
  if (arch.family == Family::kDeepseek) {
    line("kv_lora_rank", r.count("kv_lora_rank"));
    line("qk_rope_head_dim", r.count("qk_rope_head_dim"));
    if (r.has("q_lora_rank")) line("q_lora_rank", r.count("q_lora_rank"));
  }
  if (arch.family == Family::kGptOss ||
      (r.has("sliding_window") && r.flag("use_sliding_window", true))) {
    const long long window = r.count("sliding_window");
    long long pattern = 1;  // every layer slides unless layer_types says otherwise
    if (r.has("layer_types")) {
      const std::vector<bool> full = layer_kinds(r, "layer_types", "full_attention", layers);
      long long first_full = 0;
      while (first_full < layers && !full[static_cast<std::size_t>(first_full)]) ++first_full;
      pattern = first_full == layers ? 1 : first_full + 1;
      for (long long i = 0; i < layers; ++i) {
        const bool slides = pattern == 1 || (i + 1) % pattern != 0;
        if (slides == full[static_cast<std::size_t>(i)]) {
          r.fail("layer_types", fmt::format("sliding and full layers in a pattern other than every "
                                            "{}-th full are not priced",
                                            pattern));
        }
      }
    }
    line("sliding_window", window);
    line("sliding_window_pattern", pattern);
  }
  if (arch.family == Family::kHybrid) {
    const long long interval = r.count("full_attention_interval");
    if (r.has("layer_types")) {
      const std::vector<bool> full = layer_kinds(r, "layer_types", "full_attention", layers);
      for (long long i = 0; i < layers; ++i) {
        if (full[static_cast<std::size_t>(i)] != ((i + 1) % interval == 0)) {
          r.fail("layer_types", "full-attention layers off the full_attention_interval");
        }
      }
    }
    line("full_attention_interval", interval);
    line("attention_output_gate", r.flag("attn_output_gate", true) ? "true" : "false");
    line("linear_key_heads", r.count("linear_num_key_heads"));
    line("linear_value_heads", r.count("linear_num_value_heads"));
    line("linear_key_head_dim", r.count("linear_key_head_dim"));
    line("linear_value_head_dim", r.count("linear_value_head_dim"));
    line("linear_conv_kernel", r.count("linear_conv_kernel_dim"));
  }
  // A checkpoint quantized with its attention left out (quantization_config's
  // modules_to_not_convert naming self_attn) keeps those projections in bf16.
  if (top.has("quantization_config") && root.at("quantization_config").is_object()) {
    const nlohmann::json& q = root.at("quantization_config");
    if (q.contains("modules_to_not_convert") && q.at("modules_to_not_convert").is_array()) {
      for (const auto& m : q.at("modules_to_not_convert")) {
        if (m.is_string() && m.get<std::string>().find("self_attn") != std::string::npos) {
          line("fp8_skips_attention", "true");
          break;
        }
      }
    }
  }
  y += fmt::format("source: >-\n  {} ({}), imported by costmodel import-model.\n",
                   std::filesystem::path(path).lexically_normal().string(), arch_name);
  return y;
}

}  // namespace servesim
