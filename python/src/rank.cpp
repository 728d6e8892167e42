#include "python/src/rank.hpp"

#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "tools/costmodel/rank.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

std::string run_rank(std::string model, std::vector<std::string> gpus, int tp,
                     std::vector<int> tokens, int decodes, int context,
                     std::vector<std::string> profiles, std::string workload, std::string metric) {
  decide::RankArgs a;
  a.model = std::move(model);
  if (!gpus.empty()) a.gpus = std::move(gpus);
  a.tp = tp;
  if (!tokens.empty()) a.tokens = std::move(tokens);
  a.decodes = decodes;
  a.context = context;
  a.profiles = std::move(profiles);
  a.workload = std::move(workload);
  a.metric = std::move(metric);
  a.json = true;
  const py::gil_scoped_release nogil;
  return decide::run_rank(a);
}

}  // namespace

void bind_rank(py::module_& m) {
  m.def("rank", &run_rank, py::arg("model"), py::arg("gpus"), py::arg("tp"), py::arg("tokens"),
        py::arg("decodes"), py::arg("context"), py::arg("profiles"), py::arg("workload"),
        py::arg("metric"));
}

}  // namespace servesim::python
