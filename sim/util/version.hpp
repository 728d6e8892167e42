#pragma once

#include <string_view>

namespace servesim {

// The version every output records: the CMake project version and the git commit it was built
// from ("0.1+afdadbf12345", "-dirty" when the tree had uncommitted changes; "0.1" outside git).
std::string_view servesim_version();

}  // namespace servesim
