#pragma once

#include <cstdint>
#include <optional>

#include <pybind11/pybind11.h>

#include "sim/config/run_config.hpp"

namespace servesim::python {

// A run's config from Python: `config` is a path (str or os.PathLike) or a dict with the YAML's
// structure; `overrides` maps dotted keys to values, applied as `simulate --set` applies its
// flags (errors name "overrides key=value"). A dict's relative paths resolve against the
// working folder, or against its `config_dir:` key. Bad input throws InputError, as the CLI's.
// Needs the GIL.
RunConfig run_config_from_python(pybind11::handle config, pybind11::handle overrides,
                                 std::optional<std::uint64_t> seed);

// The text a Python value stands for in a `key=value` override: YAML flow text for lists and
// dicts, `true`/`false` for booleans, the shortest round-trip text for floats.
std::string override_text(pybind11::handle value);

// A dict config as block YAML text (what a sweep, which reads its config from a file, is given).
std::string config_yaml(pybind11::handle config);

}  // namespace servesim::python
