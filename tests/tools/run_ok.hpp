#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {

// Runs `simulate args… --out <fresh folder> --quiet`, requires exit 0 (showing what it printed
// otherwise) and returns the folder.
inline std::filesystem::path run_ok(const std::string& name, std::vector<std::string> args) {
  const auto dir = fresh_dir(name);
  args.insert(args.end(), {"--out", dir.string(), "--quiet"});
  const auto r = run_simulate(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return dir;
}

}  // namespace servesim::test
