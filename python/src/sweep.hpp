#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace servesim::python {

// Binds `_servesim.sweep`: the `sweep` command's study (tools/sweep) with its options given as
// keyword arguments of the same names, writing its files into `out_dir` without plots or
// printing. Returns (that folder, the KeyboardInterrupt that stopped it or None): Ctrl-C stops
// the sweep, whose files then hold the runs done (python/src/interruptible.hpp).
void bind_sweep(pybind11::module_& m);

}  // namespace servesim::python
