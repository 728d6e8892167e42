#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace servesim::sweep {

// How a sweep reads and writes the values of its points as text.

// A finite decimal number that is the whole of `s`, or none.
std::optional<double> parse_number(const std::string& s);
// A varied value as JSON: an integer or a number where the text is one, else the text.
nlohmann::json value_json(const std::string& text);
// A metric as JSON: the number, or null for NaN (no value).
nlohmann::json number_or_null(double v);
// A CSV cell: the shortest text that reads back as `v`, empty for NaN.
std::string csv_number(double v);
// A CSV cell for text: quoted (quotes doubled) when it holds a comma, quote or newline.
std::string csv_text(const std::string& s);
// `s` as one word of a POSIX shell command line (single-quoted unless plainly safe).
std::string shell_quote(const std::string& s);

}  // namespace servesim::sweep
