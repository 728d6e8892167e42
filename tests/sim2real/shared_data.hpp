#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

namespace servesim::test {

// The shared experiments.csv, or "" (with a WARN: the test then skips) when ../shared is absent.
inline std::string experiments_csv() {
  const std::string p =
      (std::filesystem::path(SERVESIM_SHARED_DIR) / "data/sim2real/experiments.csv").string();
  if (std::filesystem::exists(p)) return p;
  WARN("skipped: ../shared/data/sim2real is absent");
  return {};
}

}  // namespace servesim::test
