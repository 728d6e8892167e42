#include "sim/input_error.hpp"

#include <filesystem>

#include <fmt/format.h>

namespace servesim {

void throw_input_error(const std::string& file, int line, int col, const std::string& message) {
  if (col > 0) throw InputError(fmt::format("{}:{}:{}: {}", file, line, col, message));
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", file, line, message));
  throw InputError(fmt::format("{}: {}", file, message));
}

std::ifstream open_input_file(const std::string& path, std::string_view expected) {
  if (std::filesystem::is_directory(path)) {
    throw InputError(fmt::format("{}: is a folder (expected {})", path, expected));
  }
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open (expected {})", path, expected));
  return in;
}

}  // namespace servesim
