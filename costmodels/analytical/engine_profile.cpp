#include "costmodels/analytical/engine_profile.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/catalog.hpp"

namespace servesim {
namespace fs = std::filesystem;

std::shared_ptr<const EngineProfile> EngineProfile::load(const ConfigNode& ref) {
  if (ref.is_map()) return std::make_shared<const EngineProfile>(parse(ref));
  const std::string s = ref.as_string();
  if (fs::is_regular_file(s)) {
    return std::make_shared<const EngineProfile>(parse(ConfigNode::load_file(s)));
  }
  std::string known;
  for (const std::string& dir : Catalog::default_dirs()) {
    const fs::path p = fs::path(dir) / "engines" / (s + ".yaml");
    if (fs::is_regular_file(p)) {
      return std::make_shared<const EngineProfile>(parse(ConfigNode::load_file(p.string())));
    }
    if (fs::is_directory(fs::path(dir) / "engines")) {
      for (const auto& e : fs::directory_iterator(fs::path(dir) / "engines")) {
        if (e.path().extension() == ".yaml") known.append(" ").append(e.path().stem().string());
      }
    }
  }
  ref.fail("unknown engine profile '" + s +
           "' (expected a YAML file path or one of:" + (known.empty() ? " none" : known) + ")");
}

EngineProfile EngineProfile::parse(const ConfigNode& file) {
  file.require_map("an engine profile");
  file.check_keys(
      {"name", "source", "images", "request_overhead_ns", "analytical", "gpus", "fitted"});
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
  if (auto g = file.find("gpus")) {
    g->require_map("per-GPU engine constants (GPU name: {host: …, analytical: …})");
    Catalog catalog(Catalog::default_dirs());
    for (const std::string& key : g->keys()) {
      const ConfigNode section = g->at(key);
      const GpuSpec& gpu = catalog.gpu(key, section);
      section.require_map("engine constants for one GPU ({host: …, analytical: …})");
      section.check_keys({"host", "analytical"});
      // Validate now (a bad key fails at load, not at the first step).
      AnalyticalParams probe;
      if (auto a = section.find("analytical")) probe.apply_analytical(*a);
      if (auto h = section.find("host")) probe.apply_host(*h);
      e.gpus.emplace_back(gpu.name, section);
    }
  }
  return e;
}

std::optional<std::string> EngineProfile::find_for_image(const std::string& image) {
  for (const std::string& dir : Catalog::default_dirs()) {
    const fs::path engines = fs::path(dir) / "engines";
    if (!fs::is_directory(engines)) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(engines)) {
      if (f.path().extension() == ".yaml") files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      for (const std::string& s : parse(ConfigNode::load_file(f.string())).images) {
        if (!s.empty() && image.find(s) != std::string::npos) return f.stem().string();
      }
    }
  }
  return std::nullopt;
}

void EngineProfile::apply(const GpuSpec& gpu, AnalyticalParams& params) const {
  if (all_gpus) params.apply_analytical(*all_gpus);
  for (const auto& [gpu_name, section] : gpus) {
    if (gpu_name != gpu.name) continue;
    if (auto a = section.find("analytical")) params.apply_analytical(*a);
    if (auto h = section.find("host")) params.apply_host(*h);
  }
}

}  // namespace servesim
