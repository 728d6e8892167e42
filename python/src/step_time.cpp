#include "python/src/step_time.hpp"

#include <fmt/format.h>

#include "python/src/python_config.hpp"
#include "run/run_builder.hpp"
#include "sim/config/input_error.hpp"
#include "sim/engine/batch_shape.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

// `batch` as the engine's BatchShape; errors name the item ("batch[2]: …").
BatchShape batch_shape(py::handle batch) {
  BatchShape shape;
  std::size_t i = 0;
  for (const auto& item : batch) {
    const auto pair = py::reinterpret_borrow<py::sequence>(item);
    if (!py::isinstance<py::sequence>(item) || pair.size() != 2) {
      throw InputError(fmt::format("batch[{}]: expected a (prompt_tokens, context) pair", i));
    }
    const auto tokens = pair[0].cast<std::int64_t>();
    const auto context = pair[1].cast<std::int64_t>();
    if (tokens < 0 || context < 0 || tokens > INT32_MAX || context > INT32_MAX) {
      throw InputError(
          fmt::format("batch[{}]: ({}, {}): expected whole numbers ≥ 0", i, tokens, context));
    }
    if (tokens == 0 && context < 1) {
      throw InputError(fmt::format(
          "batch[{}]: a decode (prompt_tokens 0) attends to its context (expected context ≥ 1)",
          i));
    }
    if (tokens > 0) {
      shape.prefills.push_back(
          {static_cast<std::int32_t>(tokens), static_cast<std::int32_t>(context)});
    } else {
      shape.decode_contexts.push_back(static_cast<std::int32_t>(context));
    }
    ++i;
  }
  if (shape.empty()) throw InputError("batch: the batch is empty");
  return shape;
}

}  // namespace

py::dict step_time(const std::string& gpu, const std::string& model, std::int64_t tp,
                   py::handle batch, py::handle cost_model, py::handle replica,
                   py::handle scheduler) {
  const BatchShape shape = batch_shape(batch);
  py::dict item;
  item["gpu"] = gpu;
  item["tp"] = tp;
  if (!replica.is_none()) {
    for (const auto& [k, v] : replica.cast<py::dict>()) item[k] = v;
  }
  py::dict workload;  // one request: build_run needs a workload; no step of it is priced
  workload["arrival"] = py::dict(py::arg("kind") = "poisson", py::arg("qps") = 1);
  workload["lengths"] = py::dict(py::arg("kind") = "fixed", py::arg("prompt_tokens") = 1,
                                 py::arg("output_tokens") = 1);
  workload["num_requests"] = 1;
  py::dict config;
  config["name"] = "step_time";
  config["model"] = model;
  config["replicas"] = py::make_tuple(item);
  config["scheduler"] = scheduler.is_none() ? py::dict(py::arg("kind") = "sarathi")
                                            : py::reinterpret_borrow<py::object>(scheduler);
  config["cost_model"] = py::isinstance<py::str>(cost_model)
                             ? py::dict(py::arg("kind") = cost_model)
                             : py::reinterpret_borrow<py::object>(cost_model);
  config["workload"] = workload;
  const RunConfig cfg = run_config_from_python(config, py::none(), std::nullopt);
  StepCost cost;
  {
    const py::gil_scoped_release nogil;
    const BuiltRun run = build_run(cfg);
    cost = run.cost_model->step(shape, run.fleet.front()->spec);
  }
  py::dict breakdown;
  for (std::size_t i = 0; i < kNumCostComponents; ++i) {
    breakdown[py::str(std::string(cost_component_name(static_cast<CostComponent>(i))))] =
        cost.breakdown_ns[i];
  }
  py::dict out;
  out["total_ns"] = cost.total_ns;
  out["breakdown_ns"] = breakdown;
  out["energy_j"] = cost.energy_j;
  out["stage_ns"] = cost.stage_ns;
  return out;
}

}  // namespace servesim::python
