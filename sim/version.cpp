#include "sim/version.hpp"

#include "servesim_version.inc"  // generated at build time by sim/version.cmake

namespace servesim {

std::string_view servesim_version() { return SERVESIM_VERSION_STRING; }

}  // namespace servesim
