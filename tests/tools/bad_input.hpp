#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {

// Runs simulate on a config and returns what it printed, requiring exit status 1.
// Each test gets its own folder: CTest runs the test cases in parallel.
inline std::string bad_input_message(const std::string& dir_name,
                                     const std::vector<std::string>& args) {
  const auto dir = fresh_dir("bad_" + dir_name);
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--out", dir.string(), "--quiet"});
  const auto r = run_simulate(all);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  return r.output;
}

}  // namespace servesim::test
