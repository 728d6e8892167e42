#pragma once

#include <pybind11/pybind11.h>

namespace servesim::python {

// Binds `_servesim.rank`: `costmodel rank` (tools/costmodel/rank) with its options given as
// keyword arguments of the same names; returns its JSON report's text. The GIL is released
// while it runs.
void bind_rank(pybind11::module_& m);

}  // namespace servesim::python
