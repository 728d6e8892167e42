// Every number a user can write — in a run config, a hardware file, a model file or an engine
// profile — rejects NaN and infinity with the --set flag that gave it, where it is read: no
// non-finite value reaches the simulation.
#include <charconv>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim::test {
namespace {
namespace fs = std::filesystem;

const fs::path kRoot = SERVESIM_SOURCE_DIR;

// The dotted paths (list items by index) of the leaves of `node` that read as numbers.
void numeric_leaves(const YAML::Node& node, const std::string& path,
                    std::vector<std::string>& out) {
  const auto join = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (key.find('.') == std::string::npos) numeric_leaves(kv.second, join(key), out);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      numeric_leaves(node[i], join(std::to_string(i)), out);
  } else if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) out.push_back(path);
  }
}

std::vector<std::string> leaves_of(const fs::path& file) {
  std::vector<std::string> out;
  numeric_leaves(YAML::LoadFile(file.string()), "", out);
  return out;
}

std::vector<fs::path> yaml_files(const fs::path& dir, bool recursive) {
  return files_in(dir, ".yaml", recursive, "test");
}

// For each numeric leaf of `file` and each of .nan, .inf, -.inf: `load` of the file with that
// leaf overridden must throw an InputError naming the --set. Returns the leaves checked.
template <class Load>
int check_every_leaf(const fs::path& file, Load&& load) {
  int checked = 0;
  for (const auto& leaf : leaves_of(file)) {
    for (const char* bad : {".nan", ".inf", "-.inf"}) {
      const std::string assignment = leaf + "=" + bad;
      INFO(file.string() << ": --set " << assignment);
      const auto attempt = [&] {
        ConfigNode root = ConfigNode::load_file(file.string());
        root.apply_override(assignment, "--set");
        load(root);
      };
      CHECK_THROWS_WITH(attempt(), Catch::Contains("--set " + assignment));
    }
    ++checked;
  }
  return checked;
}

}  // namespace

TEST_CASE("every number in the example run configs rejects NaN and infinity at its --set",
          "[hardening][non-finite]") {
  RunCache cache;
  std::vector<fs::path> configs = yaml_files(kRoot / "configs", false);
  for (const auto& f : yaml_files(kRoot / "tests/tools/configs", false)) configs.push_back(f);
  int leaves = 0;
  for (const auto& config : configs) {
    leaves += check_every_leaf(config, [&](const ConfigNode& root) {
      const RunConfig c = RunConfig::parse(root, std::nullopt);
      (void)build_run(c, &cache);
    });
  }
  CHECK(leaves > 100);
}

TEST_CASE("every number in the hardware, model and engine files rejects NaN and infinity",
          "[hardening][non-finite]") {
  int leaves = 0;
  for (const auto& f : yaml_files(kRoot / "configs/hardware", false)) {
    leaves += check_every_leaf(f, [](const ConfigNode& root) {
      (void)AnalyticalParams::for_gpu(Catalog::load_gpu(root));
    });
  }
  for (const auto& f : yaml_files(kRoot / "configs/models", true)) {
    leaves += check_every_leaf(f, [](const ConfigNode& root) { (void)Catalog::load_model(root); });
  }
  for (const auto& f : yaml_files(kRoot / "configs/engines", false)) {
    leaves += check_every_leaf(f, [](const ConfigNode& root) { (void)EngineProfile::parse(root); });
  }
  CHECK(leaves > 1000);
}

}  // namespace servesim::test
