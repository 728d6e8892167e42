#include "sim/hardware/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"
#include "sim/config/suggest.hpp"
#include "sim/hardware/hf_config.hpp"

namespace servesim {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

namespace fs = std::filesystem;
namespace {

int get_count(const ConfigNode& f, std::string_view key) {
  return static_cast<int>(f.get_positive_int(key));
}

int get_count(const ConfigNode& f, std::string_view key, int fallback) {
  if (!f.has(key)) return fallback;
  const ConfigNode n = f.at(key);
  const auto v = n.as_int();
  if (v < 0) n.fail("expected an integer ≥ 0");
  return static_cast<int>(v);
}

// The required `interconnect:` section: how a node of these GPUs is wired by default, and the
// host bridge a ring over PCIe alone shares. The kind must agree with the NVLink fields above it.
void read_interconnect(const ConfigNode& ic, GpuSpec& g) {
  ic.require_map(
      "interconnect: {kind: nvswitch | nvlink_bridge | pcie, pcie_gen: …, host_gb_per_s: …, "
      "source: …}");
  ic.check_keys({"kind", "pcie_gen", "host_gb_per_s", "source"});
  const ConfigNode kind = ic.at("kind");
  g.interconnect = kind.as_string();
  static const std::vector<std::string> kKinds{"nvlink_bridge", "nvswitch", "pcie"};
  if (std::find(kKinds.begin(), kKinds.end(), g.interconnect) == kKinds.end()) {
    kind.fail(fmt::format("unknown interconnect kind '{}' (known: {})", g.interconnect,
                          fmt::join(kKinds, ", ")));
  }
  if (g.interconnect == "nvswitch" && (g.nvlink_gb_per_s <= 0 || g.nvlink_bridge)) {
    kind.fail("nvswitch needs NVLink through a switch (nvlink_gb_per_s > 0, no nvlink_bridge)");
  }
  if (g.interconnect == "nvlink_bridge" && !g.nvlink_bridge) {
    kind.fail("nvlink_bridge needs a card whose NVLink is a bridge (nvlink_bridge: true)");
  }
  const ConfigNode gen = ic.at("pcie_gen");
  g.pcie_gen = static_cast<int>(gen.as_int());
  if (g.pcie_gen < 3 || g.pcie_gen > 6) gen.fail("expected a PCIe generation from 3 to 6");
  // An x16 link moves about 1 GB/s per GT/s per direction: 16, 32, 64, 128 GB/s for Gen3-6.
  const double x16_gb_per_s = 16.0 * (1 << (g.pcie_gen - 3));
  if (g.pcie_gb_per_s > x16_gb_per_s) {
    gen.fail(fmt::format("pcie_gb_per_s {} exceeds a Gen{} x16 link ({} GB/s per direction)",
                         g.pcie_gb_per_s, g.pcie_gen, x16_gb_per_s));
  }
  g.host_gb_per_s = ic.get_positive("host_gb_per_s");
  (void)ic.get_string("source");
}

// The names a hardware file answers to, read from its top-level `name:` and `aliases: [...]` lines
// without parsing the whole file (the index reads every file; a run uses one or two). Nullopt
// when those lines are not in the plain form every shipped file uses, or the name is not the
// file's stem: the caller then parses the file, which reports any problem at its line.
std::optional<std::vector<std::string>> quick_names(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  const auto plain = [](std::string_view v) {
    return !v.empty() && v.find_first_of("'\"{}[]&*!|>%@`#,") == std::string_view::npos &&
           v.find(": ") == std::string_view::npos && v.front() != ' ' && v.back() != ' ' &&
           v.front() != '-' && v.front() != '?';
  };
  const auto trim = [](std::string_view v) {
    const auto b = v.find_first_not_of(' ');
    if (b == std::string_view::npos) return std::string_view();
    return v.substr(b, v.find_last_not_of(' ') - b + 1);
  };
  // A value up to an end-of-line comment (" #…"); the rest of the line must be blank.
  const auto value_of = [&](std::string_view line, std::size_t key_len) {
    std::string_view v = line.substr(key_len);
    if (const auto hash = v.find(" #"); hash != std::string_view::npos) v = v.substr(0, hash);
    return trim(v);
  };
  std::optional<std::string> name;
  std::vector<std::string> aliases;
  bool seen_aliases = false;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view l(line);
    if (l.starts_with("name:")) {
      const std::string_view v = value_of(l, 5);
      if (name || !plain(v)) return std::nullopt;
      name = std::string(v);
    } else if (l.starts_with("aliases:")) {
      const std::string_view v = value_of(l, 8);
      if (seen_aliases || v.size() < 2 || v.front() != '[' || v.back() != ']') return std::nullopt;
      seen_aliases = true;
      std::string_view items = v.substr(1, v.size() - 2);
      while (!items.empty()) {
        const auto comma = items.find(',');
        const std::string_view item = trim(items.substr(0, comma));
        if (!plain(item)) return std::nullopt;
        aliases.emplace_back(item);
        if (comma == std::string_view::npos) break;
        items = items.substr(comma + 1);
      }
    }
  }
  const std::string stem = p.stem().string();
  if (name && *name != stem) return std::nullopt;
  std::vector<std::string> out{stem};
  out.insert(out.end(), aliases.begin(), aliases.end());
  return out;
}

}  // namespace

Catalog::Catalog(std::vector<std::string> dirs) : dirs_(std::move(dirs)) { index(); }

std::vector<std::string> Catalog::default_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SERVESIM_CATALOG")) {
    if (!is_folder(env)) {
      throw InputError(fmt::format(
          "SERVESIM_CATALOG={}: not a folder (expected a folder with hardware/ and models/)", env));
    }
    dirs.emplace_back(env);
  }
  dirs.emplace_back(SERVESIM_CATALOG_DIR);
  return dirs;
}

std::string Catalog::default_gpu_name(const std::string& name, const ConfigNode& where) {
  static Catalog catalog(default_dirs());
  return catalog.gpu(name, where).name;
}

void Catalog::index() {
  for (const auto& dir : dirs_) {
    const fs::path hw = fs::path(dir) / "hardware";
    if (is_folder(hw)) {
      for (const auto& p : files_in(hw, ".yaml", false, "catalog")) {
        std::vector<std::string> names;
        if (auto quick = quick_names(p)) {
          names = std::move(*quick);
        } else {
          const ConfigNode f = ConfigNode::load_file(p.string());
          names.push_back(p.stem().string());
          if (f.has("name") && f.get_string("name") != p.stem().string()) {
            // The catalog key is the file's stem; a different name would show up in every output.
            f.at("name").fail(fmt::format(
                "'{}' differs from the file's name '{}' (expected the same; other spellings "
                "go in aliases)",
                f.get_string("name"), p.stem().string()));
          }
          if (auto aliases = f.find("aliases")) {
            for (const auto& a : aliases->items()) names.push_back(a.as_string());
          }
        }
        bool first_dir_entry = !gpu_files_.count(lowercase(p.stem().string()));
        for (const auto& n : names) gpu_files_.emplace(lowercase(n), p.string());
        if (first_dir_entry) gpu_display_.push_back(p.stem().string());
      }
    }
    const fs::path models = fs::path(dir) / "models";
    if (is_folder(models)) {
      for (const auto& p : files_in(models, ".yaml", true, "catalog")) {
        std::string id = p.lexically_relative(models).replace_extension("").generic_string();
        model_files_.emplace(id, p.string());
      }
    }
  }
  std::sort(gpu_display_.begin(), gpu_display_.end());
}

std::vector<std::string> Catalog::gpu_names() const { return gpu_display_; }

std::vector<std::string> Catalog::model_names() const {
  std::vector<std::string> out;
  for (const auto& [id, path] : model_files_) out.push_back(id);
  return out;
}

std::vector<std::string> Catalog::class_checked_on(const GpuSpec& gpu) {
  std::vector<std::string> out;
  if (gpu.memory_type.empty()) return out;        // no class to share
  if (!gpu.validated.empty()) return {gpu.name};  // measured itself: no file need be read
  const ConfigNode where = ConfigNode::parse("{}", "catalog");
  for (const std::string& name : gpu_names()) {
    const GpuSpec* other = nullptr;
    try {
      other = &this->gpu(name, where);
    } catch (const InputError&) {
      continue;
    }
    if (other->arch == gpu.arch && other->gddr() == gpu.gddr() && !other->validated.empty()) {
      out.push_back(other->name);
    }
  }
  return out;
}

const GpuSpec& Catalog::gpu(const std::string& name, const ConfigNode& where) {
  auto it = gpu_files_.find(lowercase(name));
  if (it == gpu_files_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, path] : gpu_files_) names.push_back(n);
    where.fail(fmt::format("unknown GPU '{}' ({}known: {})", name, did_you_mean(name, names),
                           fmt::join(gpu_display_, ", ")));
  }
  const std::lock_guard lock(*mutex_);
  if (auto hit = gpus_.find(it->second); hit != gpus_.end()) return *hit->second;
  gpu_store_.push_back(load_gpu(ConfigNode::load_file(it->second)));
  gpus_[it->second] = &gpu_store_.back();
  return gpu_store_.back();
}

const ModelSpec& Catalog::model(const std::string& name, const ConfigNode& where) {
  if (name.ends_with(".json")) {
    // A Hugging Face config.json, relative to the config that names it.
    std::filesystem::path p(name);
    if (p.is_relative()) p = std::filesystem::path(where.base_dir()) / p;
    const std::string path = p.lexically_normal().string();
    if (!std::filesystem::exists(path)) {
      where.fail(fmt::format("no such file '{}' (expected a Hugging Face config.json)", path));
    }
    const std::lock_guard lock(*mutex_);
    if (auto hit = models_.find(path); hit != models_.end()) return *hit->second;
    model_store_.push_back(load_model(ConfigNode::parse(hf_config_yaml(path), path)));
    models_[path] = &model_store_.back();
    return model_store_.back();
  }
  auto it = model_files_.find(name);
  if (it == model_files_.end()) {
    for (auto j = model_files_.begin(); j != model_files_.end(); ++j) {
      if (lowercase(j->first) == lowercase(name)) {
        it = j;
        break;
      }
    }
  }
  if (it == model_files_.end()) {
    where.fail(
        fmt::format("unknown model '{}' ({}expected a Hugging Face id with a file under "
                    "configs/models/; known: {})",
                    name, did_you_mean(name, model_names()), fmt::join(model_names(), ", ")));
  }
  const std::lock_guard lock(*mutex_);
  if (auto hit = models_.find(it->second); hit != models_.end()) return *hit->second;
  model_store_.push_back(load_model(ConfigNode::load_file(it->second)));
  models_[it->second] = &model_store_.back();
  return model_store_.back();
}

GpuSpec Catalog::load_gpu(const ConfigNode& f) {
  f.require_map("a hardware description");
  f.check_keys({"name",
                "display_name",
                "aliases",
                "arch",
                "sms",
                "gpc_sms",
                "boost_clock_mhz",
                "base_clock_mhz",
                "bf16_tflops",
                "fp8_tflops",
                "fp4_tflops",
                "memory_gb",
                "memory_bw_gb_per_s",
                "memory_type",
                "device_memory_mib",
                "l2_mb",
                "tdp_w",
                "min_power_w",
                "nvlink_gb_per_s",
                "nvlink_bridge",
                "nvswitch_multicast",
                "pcie_gb_per_s",
                "interconnect",
                "source",
                "analytical",
                "host",
                "power",
                "roofline",
                "provenance"});
  GpuSpec g;
  g.name = f.has("name") ? f.get_string("name") : fs::path(f.file()).stem().string();
  g.display_name = f.get_string("display_name", g.name);
  if (auto aliases = f.find("aliases")) {
    for (const auto& a : aliases->items()) g.aliases.push_back(a.as_string());
  }
  if (auto p = f.find("provenance")) {
    p->require_map("provenance: {constants: …, validated: […]}");
    p->check_keys({"constants", "validated", "block_mape_pct"});
    g.provenance = p->get_string("constants");
    g.block_mape_pct = p->get_nonnegative("block_mape_pct", 0);
    const ConfigNode v = p->at("validated");
    if (!v.is_sequence())
      v.fail("expected a list of what this GPU's prices were scored on ([] = none)");
    for (const auto& item : v.items()) g.validated.push_back(item.as_string());
  }
  const ConfigNode arch = f.at("arch");
  g.arch = arch.as_string();
  static const std::vector<std::string> kArchs{"ada", "ampere", "blackwell", "hopper"};
  if (std::find(kArchs.begin(), kArchs.end(), g.arch) == kArchs.end()) {
    arch.fail(fmt::format("unknown arch '{}' (known: {})", g.arch, fmt::join(kArchs, ", ")));
  }
  g.sms = get_count(f, "sms");
  if (auto gpcs = f.find("gpc_sms")) {
    int sum = 0;
    for (const auto& n : gpcs->items()) {
      const auto v = n.as_int();
      if (v <= 0) n.fail("expected a positive SM count");
      g.gpc_sms.push_back(static_cast<int>(v));
      sum += static_cast<int>(v);
    }
    if (sum != g.sms)
      gpcs->fail(fmt::format("SMs per GPC sum to {}, expected sms = {}", sum, g.sms));
  }
  g.boost_clock_mhz = f.get_positive("boost_clock_mhz");
  g.base_clock_mhz = f.get_nonnegative("base_clock_mhz", 0);
  g.bf16_tflops = f.get_positive("bf16_tflops");
  g.fp8_tflops = f.get_nonnegative("fp8_tflops", 0);
  g.fp4_tflops = f.get_nonnegative("fp4_tflops", 0);
  g.memory_gb = f.get_positive("memory_gb");
  g.device_memory_mib = f.get_nonnegative("device_memory_mib", 0);
  g.memory_bw_gb_per_s = f.get_positive("memory_bw_gb_per_s");
  if (auto t = f.find("memory_type")) {
    static const std::vector<std::string> kTypes{"gddr6", "gddr6x", "gddr7", "hbm2",
                                                 "hbm2e", "hbm3",   "hbm3e"};
    g.memory_type = t->as_string();
    if (std::find(kTypes.begin(), kTypes.end(), g.memory_type) == kTypes.end()) {
      t->fail(fmt::format("unknown memory_type '{}' (known: {})", g.memory_type,
                          fmt::join(kTypes, ", ")));
    }
  }
  g.l2_mb = f.get_positive("l2_mb");
  g.tdp_w = f.get_positive("tdp_w");
  g.min_power_w = f.get_nonnegative("min_power_w", 0);
  g.nvlink_gb_per_s = f.get_nonnegative("nvlink_gb_per_s", 0);
  g.nvlink_bridge = f.get_bool("nvlink_bridge", false);
  if (g.nvlink_bridge && g.nvlink_gb_per_s <= 0) {
    f.at("nvlink_bridge").fail("an NVLink bridge needs nvlink_gb_per_s > 0");
  }
  g.nvswitch_multicast = f.get_bool("nvswitch_multicast", false);
  if (g.nvswitch_multicast && (g.nvlink_gb_per_s <= 0 || g.nvlink_bridge)) {
    f.at("nvswitch_multicast")
        .fail(
            "NVSwitch multicast needs NVLink through an NVSwitch (nvlink_gb_per_s > 0, no "
            "nvlink_bridge)");
  }
  g.pcie_gb_per_s = f.get_positive("pcie_gb_per_s", 32);  // every GPU reaches its peers over PCIe
  read_interconnect(f.at("interconnect"), g);
  g.file = f;
  return g;
}

ModelSpec Catalog::load_model(const ConfigNode& f) {
  f.require_map("a model description");
  f.check_keys({"name",
                "num_layers",
                "hidden_size",
                "num_heads",
                "num_kv_heads",
                "head_dim",
                "intermediate_size",
                "vocab_size",
                "max_position_embeddings",
                "gated_mlp",
                "norm",
                "parallel_block",
                "attention_bias",
                "tie_word_embeddings",
                "num_experts",
                "experts_per_token",
                "shared_expert_intermediate",
                "moe_layer_interval",
                "first_dense_layers",
                "dense_intermediate_size",
                "kv_lora_rank",
                "qk_rope_head_dim",
                "q_lora_rank",
                "sliding_window",
                "sliding_window_pattern",
                "full_attention_interval",
                "linear_key_heads",
                "linear_value_heads",
                "linear_key_head_dim",
                "linear_value_head_dim",
                "linear_conv_kernel",
                "attention_output_gate",
                "fp8_skips_attention",
                "source"});
  ModelSpec m;
  m.name = f.get_string("name");
  m.num_layers = get_count(f, "num_layers");
  m.hidden_size = get_count(f, "hidden_size");
  m.num_heads = get_count(f, "num_heads");
  // Optional, but when given a head count or size must be positive (0 would divide by zero).
  m.num_kv_heads = f.has("num_kv_heads") ? get_count(f, "num_kv_heads") : m.num_heads;
  m.head_dim = f.has("head_dim") ? get_count(f, "head_dim") : m.hidden_size / m.num_heads;
  if (m.head_dim <= 0) f.fail("hidden_size / num_heads is 0: give head_dim");
  m.intermediate_size = get_count(f, "intermediate_size");
  m.vocab_size = get_count(f, "vocab_size");
  m.max_position_embeddings = get_count(f, "max_position_embeddings");
  m.gated_mlp = f.get_bool("gated_mlp", true);
  if (f.has("norm")) {
    const ConfigNode n = f.at("norm");
    const std::string norm = n.as_string();
    if (norm != "rmsnorm" && norm != "layernorm") {
      n.fail(fmt::format("unknown norm '{}' (known: layernorm, rmsnorm)", norm));
    }
    m.layer_norm = norm == "layernorm";
  }
  m.parallel_block = f.get_bool("parallel_block", false);
  m.attention_bias = f.get_bool("attention_bias", false);
  m.tie_word_embeddings = f.get_bool("tie_word_embeddings", false);
  m.fp8_skips_attention = f.get_bool("fp8_skips_attention", false);
  m.num_experts = get_count(f, "num_experts", 0);
  m.experts_per_token = get_count(f, "experts_per_token", 0);
  if (m.num_experts > 0 && (m.experts_per_token <= 0 || m.experts_per_token > m.num_experts)) {
    f.fail(fmt::format("experts_per_token must be in [1, num_experts = {}]", m.num_experts));
  }
  m.shared_expert_intermediate = get_count(f, "shared_expert_intermediate", 0);
  m.moe_layer_interval = get_count(f, "moe_layer_interval", 1);
  m.dense_intermediate_size = get_count(f, "dense_intermediate_size", 0);
  m.first_dense_layers = get_count(f, "first_dense_layers", 0);
  if (m.first_dense_layers > 0 && m.num_experts == 0) {
    f.at("first_dense_layers").fail("first_dense_layers precede the MoE layers: give num_experts");
  }
  if (m.first_dense_layers >= m.num_layers) {
    f.at("first_dense_layers")
        .fail(fmt::format("first_dense_layers must be below num_layers = {}", m.num_layers));
  }
  if (m.moe_layer_interval < 1) f.at("moe_layer_interval").fail("expected an integer ≥ 1");
  if (m.moe_layer_interval > 1 && m.num_experts == 0) {
    f.at("moe_layer_interval")
        .fail("moe_layer_interval > 1 interleaves MoE layers: give num_experts");
  }
  if (m.moe_layer_interval > m.num_layers) {
    f.at("moe_layer_interval")
        .fail(fmt::format("moe_layer_interval must be at most num_layers = {}", m.num_layers));
  }
  if (m.dense_intermediate_size > 0 && m.moe_layer_interval == 1 && m.first_dense_layers == 0) {
    f.at("dense_intermediate_size")
        .fail(
            "dense_intermediate_size sizes the dense layers of an MoE model: it needs "
            "moe_layer_interval > 1 or first_dense_layers > 0");
  }
  m.kv_lora_rank = get_count(f, "kv_lora_rank", 0);
  m.qk_rope_head_dim = get_count(f, "qk_rope_head_dim", 0);
  m.q_lora_rank = get_count(f, "q_lora_rank", 0);
  m.sliding_window = get_count(f, "sliding_window", 0);
  m.sliding_window_pattern = get_count(f, "sliding_window_pattern", m.sliding_window > 0 ? 1 : 0);
  m.full_attention_interval = get_count(f, "full_attention_interval", 0);
  m.attention_output_gate = f.get_bool("attention_output_gate", false);
  if (m.full_attention_interval > 0) {
    // Every dimension of the linear-attention layers is needed to price them.
    for (const auto& [key, field] : {std::pair{"linear_key_heads", &m.linear_key_heads},
                                     {"linear_value_heads", &m.linear_value_heads},
                                     {"linear_key_head_dim", &m.linear_key_head_dim},
                                     {"linear_value_head_dim", &m.linear_value_head_dim},
                                     {"linear_conv_kernel", &m.linear_conv_kernel}}) {
      if (!f.has(key)) {
        f.fail(fmt::format("full_attention_interval makes linear-attention layers: give {}", key));
      }
      *field = get_count(f, key);
    }
  } else {
    for (const char* key : {"linear_key_heads", "linear_value_heads", "linear_key_head_dim",
                            "linear_value_head_dim", "linear_conv_kernel"}) {
      if (f.has(key)) f.at(key).fail("linear-attention dimensions need full_attention_interval");
    }
  }
  if (m.sliding_window_pattern > 0 && m.sliding_window == 0) {
    f.at("sliding_window_pattern").fail("a sliding-window pattern needs sliding_window > 0");
  }
  if (m.q_lora_rank > 0 && m.kv_lora_rank == 0) {
    f.at("q_lora_rank").fail("q_lora_rank compresses an MLA query: give kv_lora_rank");
  }
  if (m.num_heads % m.num_kv_heads != 0) {
    f.at("num_kv_heads").fail("num_heads must be a multiple of num_kv_heads");
  }
  m.file = f;
  return m;
}

}  // namespace servesim
