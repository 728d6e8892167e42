#pragma once

#include <cstdint>
#include <string>

#include <pybind11/pybind11.h>

namespace servesim::python {

// The price of one engine step, the cost model alone: the replica is the one `simulate` builds
// for a config with `model`, one `replicas:` item {gpu, tp, **replica} and `scheduler` (None:
// {kind: sarathi}, whose max_num_seqs sizes the CUDA-graph capture as simulate's default), priced
// by `cost_model` (a kind name or a config's cost_model: section). `batch` is a sequence of
// (prompt_tokens, context) pairs: a prefill chunk of prompt_tokens new tokens after `context`
// cached ones, or with prompt_tokens 0 a decode attending to `context` cached tokens.
// Returns {"total_ns", "breakdown_ns": {component: ns}, "energy_j", "stage_ns"}. Bad input throws
// InputError. Needs the GIL.
pybind11::dict step_time(const std::string& gpu, const std::string& model, std::int64_t tp,
                         pybind11::handle batch, pybind11::handle cost_model,
                         pybind11::handle replica, pybind11::handle scheduler);

}  // namespace servesim::python
