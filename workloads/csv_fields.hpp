#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/engine/time.hpp"

namespace servesim {

// Exact parsers for the fields of trace CSV files. Each returns nullopt for text it does not
// accept; the caller reports the file, line, column name and text. No floating point is used,
// so a time in a file becomes the same integer nanoseconds on every machine.

// A non-negative decimal number of seconds ("4.314579", "12", "1.5e-3") to nanoseconds,
// rounding half up beyond the 9th decimal. Rejects signs other than '+', nan, inf and overflow.
std::optional<SimTime> parse_seconds_ns(std::string_view text);

// "YYYY-MM-DD HH:MM:SS[.fraction]" (or 'T' between date and time; up to 9 fractional digits)
// to nanoseconds since 1970-01-01 00:00:00 (no time zone: only differences are used). Years
// outside [kFirstDateTimeYear, kLastDateTimeYear] are rejected: int64 nanoseconds since 1970 hold
// 1677-09-21 to 2262-04-11.
inline constexpr int kFirstDateTimeYear = 1678;
inline constexpr int kLastDateTimeYear = 2261;
std::optional<SimTime> parse_datetime_ns(std::string_view text);

// A whole, non-negative token count that fits in int32 ("374", "374.0"; not "3.5", "-1").
std::optional<std::int32_t> parse_token_count(std::string_view text);

// A flag: 0/1/true/false (any case).
std::optional<bool> parse_flag(std::string_view text);

}  // namespace servesim
