#pragma once

#include <filesystem>
#include <string>

namespace servesim::test {

// A folder for test `name`'s files under the build's test_output/, created if missing.
inline std::filesystem::path test_output_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(SERVESIM_BINARY_DIR) / "test_output" / name;
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace servesim::test
