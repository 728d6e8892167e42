#include "workloads/csv_fields.hpp"

#include <array>
#include <limits>

namespace servesim {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at text[pos..] into `out`.
bool fixed_digits(std::string_view text, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > text.size()) return false;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = text[pos + i];
    if (!is_digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

}  // namespace

std::optional<SimTime> parse_seconds_ns(std::string_view text) {
  constexpr std::size_t kMaxDigits = 40;
  std::array<char, kMaxDigits> digits{};
  std::size_t n = 0;  // significant digits (leading zeros dropped)
  int frac = 0;       // digits after the point
  bool dot = false;
  bool any = false;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '+') ++i;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (is_digit(c)) {
      any = true;
      if (n > 0 || c != '0') {
        if (n == kMaxDigits) return std::nullopt;
        digits[n++] = c;
      }
      if (dot) ++frac;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    bool exp_any = false;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      exp_any = true;
      if (exponent > 1000) return std::nullopt;
      exponent = exponent * 10 + (text[i] - '0');
    }
    if (!exp_any) return std::nullopt;
    if (negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;
  if (n == 0) return SimTime{0};

  // value = digits · 10^(pow10) nanoseconds.
  const long pow10 = 9L + exponent - frac;
  const long keep = static_cast<long>(n) + pow10;  // digits left of the nanosecond point
  if (keep > 18) return std::nullopt;              // ≥ 1e18 ns (31 years)
  std::int64_t value = 0;
  for (long k = 0; k < keep && k < static_cast<long>(n); ++k) {
    value = value * 10 + (digits[static_cast<std::size_t>(k)] - '0');
  }
  for (long k = static_cast<long>(n); k < keep; ++k) value *= 10;
  if (keep >= 0 && keep < static_cast<long>(n) && digits[static_cast<std::size_t>(keep)] >= '5') {
    ++value;
  }
  return value;
}

std::optional<SimTime> parse_datetime_ns(std::string_view text) {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (!fixed_digits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' ||
      !fixed_digits(text, 5, 2, month) || text[7] != '-' || !fixed_digits(text, 8, 2, day) ||
      (text[10] != ' ' && text[10] != 'T') || !fixed_digits(text, 11, 2, hour) || text[13] != ':' ||
      !fixed_digits(text, 14, 2, minute) || text[16] != ':' || !fixed_digits(text, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
      minute > 59 || second > 59 || year < kFirstDateTimeYear || year > kLastDateTimeYear) {
    return std::nullopt;
  }
  std::int64_t nanos = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20 || text.size() > 29) return std::nullopt;
    std::int64_t scale = 100'000'000;
    for (std::size_t k = 20; k < text.size(); ++k) {
      if (!is_digit(text[k])) return std::nullopt;
      nanos += (text[k] - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t days = days_from_civil(year, month, day);
  return ((days * 24 + hour) * 60 + minute) * 60 * kNsPerS + second * kNsPerS + nanos;
}

std::optional<std::int32_t> parse_token_count(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '+') ++i;
  std::int64_t value = 0;
  bool any = false;
  for (; i < text.size() && is_digit(text[i]); ++i) {
    any = true;
    value = value * 10 + (text[i] - '0');
    if (value > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  }
  if (!any) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] == '0'; ++i) {
    }
  }
  if (i != text.size()) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

std::optional<bool> parse_flag(std::string_view text) {
  auto lower_equals = [&](std::string_view word) {
    if (text.size() != word.size()) return false;
    for (std::size_t k = 0; k < text.size(); ++k) {
      const char c = text[k] >= 'A' && text[k] <= 'Z' ? static_cast<char>(text[k] + 32) : text[k];
      if (c != word[k]) return false;
    }
    return true;
  };
  if (text == "0" || lower_equals("false")) return false;
  if (text == "1" || lower_equals("true")) return true;
  return std::nullopt;
}

}  // namespace servesim
