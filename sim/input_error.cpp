#include "sim/input_error.hpp"

#include <fmt/format.h>

namespace servesim {

void throw_input_error(const std::string& file, int line, int col, const std::string& message) {
  if (col > 0) throw InputError(fmt::format("{}:{}:{}: {}", file, line, col, message));
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", file, line, message));
  throw InputError(fmt::format("{}: {}", file, message));
}

}  // namespace servesim
