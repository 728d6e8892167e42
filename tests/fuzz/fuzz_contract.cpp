#include "tests/fuzz/fuzz_contract.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

namespace servesim::fuzz {

std::string write_input_file(std::string_view bytes, std::string_view extension) {
  static const std::string base =
      (std::filesystem::temp_directory_path() / fmt::format("servesim_fuzz_{}", getpid())).string();
  const std::string path = base + std::string(extension);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

}  // namespace servesim::fuzz
