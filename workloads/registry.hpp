#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/config_node.hpp"
#include "sim/workload.hpp"

namespace servesim {

// Builds the workload described by the run config's `workload:` section. `seed` is the run's
// seed; relative file paths resolve against node.base_dir(). Everything is validated here
// (files opened, headers checked), before simulated time 0.
std::unique_ptr<Workload> make_workload(const ConfigNode& node, std::uint64_t seed);
// Known arrival kinds and length kinds, sorted (for messages and the contract test).
std::vector<std::string> arrival_kinds();
std::vector<std::string> length_kinds();

}  // namespace servesim
