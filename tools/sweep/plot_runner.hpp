#pragma once

#include <string>

namespace servesim::sweep {

// Runs the project's plot script (tools/plot.py, matplotlib) as `plot.py KIND DIR` with the
// Python that has Debian's python3-matplotlib (SERVESIM_PYTHON, default /usr/bin/python3; the
// environment variable of that name overrides it). Returns "" when it made its plots, else what
// went wrong, for a note: the sweep's results stand without their pictures.
std::string make_plots(const std::string& dir, const std::string& kind);

}  // namespace servesim::sweep
