#include "python/src/plan.hpp"

#include <atomic>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "python/src/interruptible.hpp"
#include "tools/plan/plan.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

py::tuple run_plan(const std::string& config, std::vector<std::string> sets,
                   std::vector<std::string> varies, std::vector<std::string> gpus,
                   std::vector<int> tps, int max_gpus, std::vector<std::string> slos,
                   std::string objective, std::string prices,
                   std::vector<std::string> price_overrides, int seeds, bool exhaustive,
                   int threads, std::string out_dir, bool bands, int band_draws,
                   std::string error_model, std::vector<int> split) {
  decide::PlanOptions o;
  o.config = config;
  o.sets = std::move(sets);
  o.varies = std::move(varies);
  o.gpus = std::move(gpus);
  o.tps = std::move(tps);
  o.max_gpus = max_gpus;
  o.slos = std::move(slos);
  o.objective = std::move(objective);
  o.prices = std::move(prices);
  o.price_overrides = std::move(price_overrides);
  o.seeds = seeds;
  o.exhaustive = exhaustive;
  o.threads = threads;
  o.out_dir = std::move(out_dir);
  o.bands = bands;
  o.band_draws = band_draws;
  o.error_model = std::move(error_model);
  o.split = std::move(split);
  o.plots = false;
  o.quiet = true;
  std::atomic<bool> stop{false};
  o.stop = &stop;
  auto [report, interrupt] = run_interruptible(stop, [&] { return decide::run_plan(o); });
  return py::make_tuple(report.dir, interrupt);
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def("plan", &run_plan, py::arg("config"), py::arg("sets"), py::arg("varies"), py::arg("gpus"),
        py::arg("tps"), py::arg("max_gpus"), py::arg("slos"), py::arg("objective"),
        py::arg("prices"), py::arg("price_overrides"), py::arg("seeds"), py::arg("exhaustive"),
        py::arg("threads"), py::arg("out_dir"), py::arg("bands") = false, py::arg("band_draws") = 5,
        py::arg("error_model") = "", py::arg("split") = std::vector<int>{});
}

}  // namespace servesim::python
