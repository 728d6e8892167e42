#include "costmodels/analytical/engine_profile.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "costmodels/registry.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/suggest.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {
namespace fs = std::filesystem;

std::vector<std::string> EngineProfile::files() {
  std::vector<std::string> out;
  for (const std::string& dir : Catalog::default_dirs()) {
    const fs::path engines = fs::path(dir) / "engines";
    if (!is_folder(engines)) continue;
    for (const auto& f : files_in(engines, ".yaml", false, "engine profiles")) {
      out.push_back(f.string());
    }
  }
  return out;
}

std::optional<std::string> EngineProfile::file_of(const std::string& name) {
  for (const std::string& f : files()) {
    if (fs::path(f).stem() == name) return f;
  }
  return std::nullopt;
}

std::shared_ptr<const EngineProfile> EngineProfile::of_cost_model(const ConfigNode& cost_model) {
  const CostModelEntry* entry = find_cost_model(cost_model.get_string("kind", ""));
  if (entry == nullptr || !entry->capabilities.engine_profile || !cost_model.has("engine")) {
    return nullptr;
  }
  return load(cost_model.at("engine"));
}

void EngineProfile::default_graph_launch(const EngineProfile* engine, bool mode_set,
                                         bool max_tokens_set, std::int64_t max_num_seqs,
                                         ReplicaSpec& replica) {
  if (engine != nullptr && engine->cuda_graph_mode && !mode_set) {
    replica.cuda_graph_mode = *engine->cuda_graph_mode;
  }
  // Without a limit an 8192-token prefill step would get graph launch floors.
  if (replica.cuda_graph_mode == CudaGraphMode::kPiecewise && !max_tokens_set) {
    replica.cuda_graph_max_tokens = vllm_v1_graph_max_tokens(max_num_seqs);
  }
}

std::shared_ptr<const EngineProfile> EngineProfile::load(const ConfigNode& ref) {
  if (ref.is_map()) return std::make_shared<const EngineProfile>(parse(ref));
  const std::string s = ref.is_scalar() ? ref.as_string() : "";
  if (s.find_first_not_of(" \t") == std::string::npos) {
    ref.fail("expected an engine profile: a name in configs/engines, a YAML file path or a map");
  }
  // A relative file path is taken from the config's folder, like every input path of a config
  // (else from the working directory, where a command-line path is meant).
  fs::path file(s);
  if (file.is_relative() && is_regular(fs::path(ref.base_dir()) / file)) {
    file = fs::path(ref.base_dir()) / file;
  }
  // A profile read from a file and naming no `name:` is named after the file.
  auto from_file = [](const fs::path& path) {
    EngineProfile e = parse(ConfigNode::load_file(path.string()));
    if (!e.file.has("name")) e.name = path.stem().string();
    return std::make_shared<const EngineProfile>(std::move(e));
  };
  if (is_regular(file)) return from_file(file);
  if (auto path = file_of(s)) return from_file(*path);
  if (s.find('/') != std::string::npos || file.extension() == ".yaml") {
    ref.fail(fmt::format("engine profile file '{}': {} (expected a YAML file)", file.string(),
                         unreadable_reason(file.string())));
  }
  std::string known;
  std::vector<std::string> names;
  for (const std::string& f : files()) {
    names.push_back(fs::path(f).stem().string());
    known.append(" ").append(names.back());
  }
  ref.fail("unknown engine profile '" + s + "' (" + did_you_mean(s, names) +
           "expected a YAML file path or one of:" + (known.empty() ? " none" : known) + ")");
}

EngineProfile EngineProfile::parse(const ConfigNode& file) {
  file.require_map("an engine profile");
  if (file.keys().empty()) file.fail("an empty engine profile (expected at least a name)");
  file.check_keys({"name", "source", "images", "request_overhead_ns", "cuda_graph_mode",
                   "async_scheduling", "analytical", "gpus", "fitted"});
  EngineProfile e;
  e.file = file;
  if (auto im = file.find("images")) {
    for (const ConfigNode& i : im->items()) e.images.push_back(i.as_string());
  }
  if (auto a = file.find("analytical")) {
    AnalyticalParams probe;
    probe.apply_analytical(*a);  // validate now
    e.all_gpus = *a;
  }
  e.name = file.get_string("name", "inline");
  e.request_overhead_ns = file.get_nonnegative("request_overhead_ns", 0);
  if (auto m = file.find("cuda_graph_mode")) e.cuda_graph_mode = parse_cuda_graph_mode(*m);
  if (file.has("async_scheduling")) e.async_scheduling = file.get_bool("async_scheduling", false);
  if (auto g = file.find("gpus")) {
    g->require_map("per-GPU engine constants (GPU name: {host: …, analytical: …})");
    for (const std::string& key : g->keys()) {
      const ConfigNode section = g->at(key);
      const std::string gpu = Catalog::default_gpu_name(key, section);
      for (const auto& [seen, earlier] : e.gpus) {
        if (seen == gpu) {
          section.fail(fmt::format(
              "GPU '{}' is {}, listed already (expected one section per GPU, aliases included)",
              key, gpu));
        }
      }
      section.require_map("engine constants for one GPU ({host: …, analytical: …})");
      section.check_keys({"host", "analytical"});
      // Validate now (a bad key fails at load, not at the first step).
      AnalyticalParams probe;
      if (auto a = section.find("analytical")) probe.apply_analytical(*a);
      if (auto h = section.find("host")) probe.apply_host(*h);
      e.gpus.emplace_back(gpu, section);
    }
  }
  return e;
}

std::optional<std::string> EngineProfile::find_for_image(const std::string& image) {
  for (const std::string& f : files()) {
    for (const std::string& s : parse(ConfigNode::load_file(f)).images) {
      if (!s.empty() && image.find(s) != std::string::npos) return fs::path(f).stem().string();
    }
  }
  return std::nullopt;
}

const ConfigNode* EngineProfile::section_for(const GpuSpec& gpu) const {
  for (const auto& [gpu_name, section] : gpus) {
    if (gpu_name == gpu.name) return &section;
  }
  return nullptr;
}

std::optional<ConfigNode> EngineProfile::carried_host() const {
  std::optional<ConfigNode> host;
  for (const auto& [gpu_name, section] : gpus) {
    if (auto h = section.find("host")) {
      if (host) return std::nullopt;  // fitted on several GPUs: nothing to carry by rule
      host = h;
    }
  }
  return host;
}

void EngineProfile::apply(const GpuSpec& gpu, AnalyticalParams& params) const {
  if (all_gpus) params.apply_analytical(*all_gpus);
  const ConfigNode* section = section_for(gpu);
  if (section != nullptr) {
    if (auto a = section->find("analytical")) params.apply_analytical(*a);
  }
  if (auto h = section != nullptr ? section->find("host") : std::nullopt) {
    params.apply_host(*h);
  } else if (auto carried = carried_host()) {
    params.apply_host(*carried);
  }
}

}  // namespace servesim
