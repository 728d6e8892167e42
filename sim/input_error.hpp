#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

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

// Opens a user's input file for reading; "path: is a folder (expected …)" or "path: cannot open
// (expected …)" otherwise (a folder would open and then read as an empty file).
std::ifstream open_input_file(const std::string& path, std::string_view expected);

}  // namespace servesim
