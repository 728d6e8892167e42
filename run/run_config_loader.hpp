#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/run_config.hpp"

namespace servesim {

// One value given on the command line: "key.path=value" and the flag that gave it (errors on the
// value name the flag: "--set …", or "--vary …" for a sweep point).
struct ConfigOverride {
  std::string flag;
  std::string assignment;
};

// Loads a config file, applies --set overrides and the --seed override, validates everything.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides,
                          std::optional<std::uint64_t> seed);
// The same with each override's flag: what `simulate --set` does is this with "--set" each.
RunConfig load_run_config(const std::string& path, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed);
// The same for a document already read (a config given as data, parsed with ConfigNode::parse).
RunConfig load_run_config(ConfigNode root, const std::vector<ConfigOverride>& overrides,
                          std::optional<std::uint64_t> seed);

// The config a run ran with, as YAML: the file after its overrides, with `name`, `seed` (the
// --seed override included) and `config_dir` (the absolute folder its relative paths resolve
// against) written in, so that `simulate config.yaml` from the run's output folder reruns it.
std::string resolved_config_yaml(const RunConfig& config);

}  // namespace servesim
