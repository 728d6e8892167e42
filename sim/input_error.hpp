#pragma once

#include <stdexcept>
#include <string>

namespace servesim {

// Bad user input (YAML, traces, profiles, CLI values). The message always starts with
// "file:line:col: " (or "file:line: " for CSV rows) so the user can find the spot. Library code
// throws it; only main() catches it and exits with code 1.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// "file:line:col: message". line and col are 1-based; col 0 omits the column.
[[noreturn]] void throw_input_error(const std::string& file, int line, int col,
                                    const std::string& message);

}  // namespace servesim
