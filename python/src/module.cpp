// servesim._servesim: the extension under the `servesim` package (python/servesim). The package
// wraps these functions in its documented API (python/README.md); the runs go through the same
// library code as the commands (run/), so a run's numbers equal `simulate`'s.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/src/plan.hpp"
#include "python/src/python_config.hpp"
#include "python/src/rank.hpp"
#include "python/src/records.hpp"
#include "python/src/step_time.hpp"
#include "python/src/sweep.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/version.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

// One run. Returns (summary.json's text, the records, the exception that stopped it or None).
// The GIL is released while the run builds and runs; every 65,536 events the run takes it back
// to let Python handle signals (Ctrl-C) and to call `progress(done, total, sim_s)`. An exception
// from either stops the run at that point: its summary says "complete": false and its records
// are the requests done by then. `out_dir`: also write the output files there, as `simulate`;
// `sensitivity_pct` > 0: summary["sensitivity"], as `simulate --sensitivity`.
py::tuple simulate(py::handle config, py::handle overrides, std::optional<std::uint64_t> seed,
                   std::optional<std::string> out_dir, double sensitivity_pct,
                   py::object progress) {
  const RunConfig cfg = run_config_from_python(config, overrides, seed);
  auto records = std::make_shared<RecordCollector>();
  std::atomic<bool> stop{false};
  py::object interrupt = py::none();
  nlohmann::json summary;
  {
    const py::gil_scoped_release nogil;
    Simulation sim(cfg);
    records->set_speculative(sim.built().speculation != nullptr);
    const std::optional<std::int64_t> total = sim.built().workload->expected_requests();
    RunOptions options;
    options.write_outputs = out_dir.has_value();
    if (out_dir) options.out_dir = *out_dir;
    options.sensitivity_delta = sensitivity_pct / 100;
    options.stop = &stop;
    options.observers.push_back(records.get());
    options.on_progress = [&](const EngineTotals& t, SimTime now) {
      if (stop.load()) return;  // stopping: the first exception is the one raised
      const py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        interrupt = py::error_already_set().value();
        stop = true;
        return;
      }
      if (progress.is_none()) return;
      try {
        progress(t.finished + t.rejected, total ? py::cast(*total) : py::none(), sim_to_s(now));
      } catch (py::error_already_set& e) {
        interrupt = e.value();
        stop = true;
      }
    };
    summary = execute_run(sim, options);
  }
  records->sort_requests();
  return py::make_tuple(summary.dump(), py::cast(records), interrupt);
}

py::dict catalog() {
  const Catalog cat(Catalog::default_dirs());
  py::dict out;
  out["gpus"] = cat.gpu_names();
  out["models"] = cat.model_names();
  return out;
}

}  // namespace

}  // namespace servesim::python

PYBIND11_MODULE(_servesim, m) {
  namespace sp = servesim::python;
  m.doc() = "servesim's extension; use the servesim package";
  py::register_exception<servesim::InputError>(m, "ConfigError", PyExc_ValueError);
  py::class_<sp::RecordCollector, std::shared_ptr<sp::RecordCollector>>(m, "Records")
      .def("requests", &sp::RecordCollector::requests_array)
      .def("steps", &sp::RecordCollector::steps_array)
      .def_property_readonly("num_requests", &sp::RecordCollector::num_requests)
      .def_property_readonly("num_steps", &sp::RecordCollector::num_steps);
  m.def("simulate", &sp::simulate, py::arg("config"), py::arg("overrides"), py::arg("seed"),
        py::arg("out_dir"), py::arg("sensitivity_pct"), py::arg("progress"));
  m.def("catalog", &sp::catalog);
  m.def("value_text", &sp::override_text, py::arg("value"));
  m.def("config_yaml", &sp::config_yaml, py::arg("config"));
  sp::bind_sweep(m);
  sp::bind_plan(m);
  sp::bind_rank(m);
  m.def("step_time", &sp::step_time, py::arg("gpu"), py::arg("model"), py::arg("tp"),
        py::arg("batch"), py::arg("cost_model"), py::arg("replica"), py::arg("scheduler"));
  m.def("schema", &sp::record_schema, py::arg("speculative") = false);
  m.attr("__version__") = std::string(servesim::servesim_version());
}
