#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace servesim::python {

// Binds `_servesim.sweep`: the `sweep` command's study (tools/sweep) with its options given as
// keyword arguments of the same names, writing its files into `out_dir` without plots or
// printing; returns that folder. The GIL is released while it runs.
void bind_sweep(pybind11::module_& m);

}  // namespace servesim::python
