#pragma once

#include <pybind11/pybind11.h>

namespace servesim::python {

// Binds `_servesim.plan`: the `plan` command's search (tools/plan) with its options given as
// keyword arguments of the same names, writing plan.json and points.csv into `out_dir` without
// plots or printing. Returns (that folder, the KeyboardInterrupt that stopped it or None): Ctrl-C
// stops the search, whose plan.json then says "complete": false (python/src/interruptible.hpp).
void bind_plan(pybind11::module_& m);

}  // namespace servesim::python
