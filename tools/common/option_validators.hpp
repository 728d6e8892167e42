#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace servesim {

// A CLI11 check for an integer option: decimal digits only, within [lo, hi]. CLI11's own
// NonNegativeNumber lets an unsigned option saturate (a 23-digit seed became 2^64 − 1) and words
// its error with the double range.
CLI::Validator whole_number_in(std::uint64_t lo, std::uint64_t hi);
// A CLI11 check for a real-valued option: a finite number within [lo, hi]. CLI::Range lets nan
// through (every comparison with it is false).
CLI::Validator number_in(double lo, double hi);
// A CLI11 check for a path or name option: something other than blanks (an empty value would
// otherwise read as the option left out).
CLI::Validator nonblank(const std::string& what);

}  // namespace servesim
