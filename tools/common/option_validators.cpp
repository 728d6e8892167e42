#include "tools/common/option_validators.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace servesim {

CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi) {
  const std::string range = fmt::format("a whole number in [{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < lo ||
            v > hi) {
          return fmt::format("'{}' is not {}", text, range);
        }
        return "";
      },
      range);
}

CLI::Validator number_in(double lo, double hi) {
  const std::string range = fmt::format("a number in [{}, {}]", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
            !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("'{}' is not {}", text, range);
        }
        return "";
      },
      range);
}

CLI::Validator nonblank(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t") != std::string::npos) return "";
        return "expected " + what + ", got nothing";
      },
      what);
}

}  // namespace servesim
