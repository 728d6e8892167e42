#include "tools/sweep/value_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace servesim::sweep {

std::optional<double> parse_number(const std::string& s) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return {};
  return v;
}

nlohmann::json value_json(const std::string& text) {
  std::int64_t i = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (!text.empty() && ec == std::errc() && p == text.data() + text.size()) return i;
  if (const auto v = parse_number(text)) return *v;
  return text;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string csv_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-.,/=:+@%") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace servesim::sweep
