#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// The known name closest to `name` by edit distance (case-insensitive; a swap of two neighbours
// counts as one edit), when it is near enough to be a typo: at most 1 edit for names of up to 4
// characters, 2 up to 8, 3 beyond. "" when none is (ties go to the first in `known`).
std::string closest_name(std::string_view name, const std::vector<std::string>& known);

// "did you mean 'x'? " for an unknown `name`, or "" when no known name is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& known);

}  // namespace servesim
