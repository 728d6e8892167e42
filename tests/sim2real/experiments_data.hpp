#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

namespace servesim::test {

// The repository's measured runs, data/sim2real/experiments.csv (a test fails when it is missing).
inline std::string experiments_csv() {
  const std::string p =
      (std::filesystem::path(SERVESIM_DATA_DIR) / "sim2real/experiments.csv").string();
  REQUIRE(std::filesystem::exists(p));
  return p;
}

}  // namespace servesim::test
