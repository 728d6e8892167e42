#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "sim/engine/request.hpp"
#include "sim/engine/workload.hpp"
#include "workloads/registry.hpp"

namespace servesim::test {

// A fixture file under tests/workloads/data.
inline std::string fixture(const std::string& name) {
  return std::string(SERVESIM_SOURCE_DIR) + "/tests/workloads/data/" + name;
}

// A file under the repository's data/ (a test fails when it is missing).
inline std::string data_file(const std::string& relative) {
  const std::string path = std::string(SERVESIM_DATA_DIR) + "/" + relative;
  REQUIRE(std::filesystem::exists(path));
  return path;
}

// The `workload:` node of a YAML document given as text (errors name "test.yaml").
inline ConfigNode workload_node(const std::string& yaml) {
  return ConfigNode::parse(yaml, "test.yaml").at("workload");
}

// A `workload: {trace: …}` document for a trace file of `format`, with `extra` keys inside the
// trace map and `workload_extra` lines after it.
inline std::string trace_yaml(const std::string& format, const std::string& file,
                              const std::string& extra = "",
                              const std::string& workload_extra = "") {
  return "workload:\n  trace: {format: " + format + ", file: '" + file + "'" + extra + "}\n" +
         workload_extra;
}

// Lengths every synthetic test can share: 100 prompt and 10 output tokens.
inline const std::string kFixed = "{kind: fixed, prompt_tokens: 100, output_tokens: 10}";

inline std::unique_ptr<Workload> make(const std::string& yaml, std::uint64_t seed = 1) {
  return make_workload(workload_node(yaml), seed);
}

// Every request the workload yields (only for small workloads).
inline std::vector<RequestSpec> drain(Workload& w) {
  std::vector<RequestSpec> out;
  while (auto r = w.next()) out.push_back(*r);
  return out;
}

// The message of the InputError that building and draining `yaml`'s workload throws.
inline std::string error_of(const std::string& yaml) {
  try {
    auto w = make(yaml);
    drain(*w);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for:\n" << yaml);
  return "";
}

}  // namespace servesim::test
