#include "sim/config/kind_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/suggest.hpp"

namespace servesim {

void fail_unknown_kind(const ConfigNode& at, std::string_view what, std::string_view given,
                       const std::vector<std::string>& known) {
  at.fail(fmt::format("unknown {} '{}' ({}known: {})", what, given, did_you_mean(given, known),
                      fmt::join(known, ", ")));
}

}  // namespace servesim
