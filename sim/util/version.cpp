#include "sim/util/version.hpp"

#include "servesim_version.inc"  // generated at build time by sim/util/version.cmake

namespace servesim {

std::string_view servesim_version() { return SERVESIM_VERSION_STRING; }

}  // namespace servesim
