#pragma once

#include <limits>

namespace servesim {

// A number that is not known (no sample, an undefined ratio): outputs write it as JSON null and
// tables as "-", so it never reads as a measured zero.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace servesim
