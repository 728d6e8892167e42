#include "run/run_config_loader.hpp"

#include <yaml-cpp/yaml.h>

#include "sim/config/input_error.hpp"

namespace servesim {

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          std::optional<std::uint64_t> seed) {
  std::vector<ConfigOverride> flagged;
  flagged.reserve(overrides.size());
  for (const auto& o : overrides) flagged.push_back({"--set", o});
  return load_run_config(path, flagged, seed);
}

RunConfig load_run_config(const std::string& path, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed) {
  return load_run_config(ConfigNode::load_file(path), overrides, seed);
}

RunConfig load_run_config(ConfigNode root, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed) {
  for (const auto& o : overrides) root.apply_override(o.assignment, o.flag);
  return RunConfig::parse(root, seed);
}

std::string resolved_config_yaml(const RunConfig& config) {
  YAML::Node doc = YAML::Clone(config.root.yaml());
  doc["name"] = config.name;
  doc["seed"] = config.seed;
  doc["config_dir"] = absolute_path(config.root.base_dir());
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

}  // namespace servesim
