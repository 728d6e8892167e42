#pragma once

#include <string>

#include "tools/sim2real/silicon.hpp"

namespace servesim::sim2real {

// `sim2real --silicon FILE`: reads the file, replays every row servesim can express, writes each
// run's config and report.json into `out_dir` (when given) and prints the report (a table, or
// JSON with `json`). Returns the exit code.
int run_silicon_command(const std::string& file, const SiliconOptions& options,
                        const std::string& out_dir, bool json);

}  // namespace servesim::sim2real
