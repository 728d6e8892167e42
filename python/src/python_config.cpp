#include "python/src/python_config.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "run/run_config_loader.hpp"
#include "sim/config/config_node.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

// The name a dict config goes by in error messages ("config dict:4:3: unknown key …").
constexpr const char* kDictSource = "config dict";

// `value` as a YAML node; `where` is its dotted key path, for the TypeError of an unsupported
// value.
YAML::Node to_yaml(py::handle value, const std::string& where) {
  if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (py::isinstance<py::bool_>(value)) return YAML::Node(value.cast<bool>() ? "true" : "false");
  if (py::isinstance<py::int_>(value)) return YAML::Node(py::str(value).cast<std::string>());
  if (py::isinstance<py::float_>(value)) return YAML::Node(py::repr(value).cast<std::string>());
  if (py::isinstance<py::str>(value)) return YAML::Node(value.cast<std::string>());
  if (py::isinstance<py::dict>(value)) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [k, v] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k)) {
        throw py::type_error(fmt::format("config key {} at '{}' is not a str",
                                         py::repr(k).cast<std::string>(), where));
      }
      const auto key = k.cast<std::string>();
      map[key] = to_yaml(v, where.empty() ? key : where + "." + key);
    }
    return map;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    YAML::Node seq(YAML::NodeType::Sequence);
    std::size_t i = 0;
    for (const auto& item : value) {
      seq.push_back(to_yaml(item, fmt::format("{}.{}", where, i++)));
    }
    return seq;
  }
  if (py::hasattr(value, "__fspath__")) return YAML::Node(py::str(value).cast<std::string>());
  throw py::type_error(
      fmt::format("config value at '{}' is a {}: expected a dict, list, str, "
                  "int, float, bool or None",
                  where, py::str(value.get_type().attr("__name__")).cast<std::string>()));
}

}  // namespace

std::string override_text(py::handle value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  const YAML::Node node = to_yaml(value, "overrides");
  if (node.IsScalar()) return node.Scalar();
  if (node.IsNull()) return "null";
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

std::string config_yaml(py::handle config) {
  YAML::Emitter out;
  out << to_yaml(config, "");
  return std::string(out.c_str()) + "\n";
}

RunConfig run_config_from_python(py::handle config, py::handle overrides,
                                 std::optional<std::uint64_t> seed) {
  std::vector<ConfigOverride> flagged;
  if (!overrides.is_none()) {
    for (const auto& [k, v] : overrides.cast<py::dict>()) {
      flagged.push_back(
          {"overrides", fmt::format("{}={}", py::str(k).cast<std::string>(), override_text(v))});
    }
  }
  if (py::isinstance<py::dict>(config)) {
    YAML::Emitter out;
    out << to_yaml(config, "");
    return load_run_config(ConfigNode::parse(std::string(out.c_str()) + "\n", kDictSource), flagged,
                           seed);
  }
  if (!py::isinstance<py::str>(config) && !py::hasattr(config, "__fspath__")) {
    throw py::type_error("config must be a path (str or os.PathLike) or a dict");
  }
  const auto path = py::module_::import("os").attr("fspath")(config).cast<std::string>();
  return load_run_config(path, flagged, seed);
}

}  // namespace servesim::python
