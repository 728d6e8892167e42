#include "python/src/sweep.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include <pybind11/stl.h>

#include "python/src/interruptible.hpp"
#include "tools/sweep/shards.hpp"
#include "tools/sweep/study.hpp"

namespace py = pybind11;

namespace servesim::python {

namespace {

py::tuple run_sweep(const std::string& config, std::vector<std::string> sets,
                    std::vector<std::string> varies, bool zip, int seeds,
                    std::optional<std::uint64_t> seed, std::vector<int> threads,
                    std::vector<std::string> slos, std::string pick, std::string throughput,
                    std::vector<std::string> baselines, std::vector<std::string> oracle,
                    std::string max_rate, double rate_tol, std::string out_dir, bool keep_runs) {
  sweep::SweepOptions o;
  o.config = config;
  o.sets = std::move(sets);
  o.varies = std::move(varies);
  o.zip = zip;
  o.seeds = seeds;
  o.seed = seed;
  o.threads = std::move(threads);
  o.slos = std::move(slos);
  o.pick = std::move(pick);
  o.throughput = std::move(throughput);
  o.baselines = std::move(baselines);
  o.oracle = std::move(oracle);
  o.max_rate = std::move(max_rate);
  o.rate_tol = rate_tol;
  o.out_dir = std::move(out_dir);
  o.keep_runs = keep_runs;
  o.plots = false;
  o.quiet = true;
  // No command line: MPI stays untouched unless a launcher started this Python.
  int argc = 0;
  char* no_args = nullptr;
  char** argv = &no_args;
  const sweep::Shards shards(argc, argv);
  std::atomic<bool> stop{false};
  o.stop = &stop;
  auto [report, interrupt] = run_interruptible(stop, [&] { return sweep::run_sweep(o, shards); });
  return py::make_tuple(report.dir, interrupt);
}

}  // namespace

void bind_sweep(py::module_& m) {
  m.def("sweep", &run_sweep, py::arg("config"), py::arg("sets"), py::arg("varies"), py::arg("zip"),
        py::arg("seeds"), py::arg("seed"), py::arg("threads"), py::arg("slos"), py::arg("pick"),
        py::arg("throughput"), py::arg("baselines"), py::arg("oracle"), py::arg("max_rate"),
        py::arg("rate_tol"), py::arg("out_dir"), py::arg("keep_runs"));
}

}  // namespace servesim::python
