#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/collective_model.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;

namespace {

// Without a measurement of this GPU's all-reduce: its wiring and what the model predicts on it,
// on the hardware file's default topology and on PCIe alone where that differs.
std::string predicted_network(const Context& c, const CostmodelArgs& a, const std::string& why) {
  std::vector<std::string> topologies{c.gpu.default_topology()};
  if (topologies[0] != "pcie") topologies.emplace_back("pcie");
  const std::vector<int> workers{2, 4, 8};
  const std::vector<double> sizes_mib{1.0 / 16, 1, 16, 256};
  nlohmann::json j;
  c.stamp(j);
  j["interconnect"] = c.gpu.interconnect_summary();
  j["measured"] = false;
  j["why"] = why;
  std::string out =
      fmt::format("{} — all-reduce predicted, not validated: {}\n  interconnect: {}\n", c.title(),
                  why, c.gpu.interconnect_summary());
  out += fmt::format("  {:<16} {:>2}", "topology", "p");
  for (const double mib : sizes_mib) {
    out += fmt::format(
        " {:>12}", mib < 1 ? fmt::format("{:g} KiB", mib * 1024) : fmt::format("{:g} MiB", mib));
  }
  out += "   (µs)\n";
  for (const auto& topology : topologies) {
    for (const int p : workers) {
      const TpTopology topo(p, topology, c.gpu, c.params);
      nlohmann::json row = {{"topology", topology}, {"workers", p}};
      out += fmt::format("  {:<16} {:>2}", topology, p);
      for (const double mib : sizes_mib) {
        const double ns = topo.all_reduce_ns(mib * 1048576.0);
        row["all_reduce_us"].push_back({{"bytes", mib * 1048576.0}, {"us", ns / 1e3}});
        out += fmt::format(" {:>12.1f}", ns / 1e3);
      }
      out += "\n";
      j["predicted"].push_back(row);
    }
  }
  return a.json ? j.dump(2) + "\n" : out;
}

}  // namespace

std::string run_network(const CostmodelArgs& a) {
  Context c = load(a, false);
  if (a.profiles.empty()) return predicted_network(c, a, "no --profiles given");
  if (!has_network_profile(a.profiles, c.gpu)) {
    return predicted_network(
        c, a,
        "no <gpu>_dgx or <gpu>_pairwise_nvlink all_reduce.csv of this GPU under " + a.profiles);
  }
  const NetworkValidation v = validate_network(a.profiles, c.gpu, c.params);
  if (a.json) {
    nlohmann::json j;
    c.stamp(j);
    j["interconnect"] = v.interconnect;
    for (const auto& s : v.slices) {
      j["slices"].push_back({{"file", s.file},
                             {"topology", s.topology},
                             {"workers", s.workers},
                             {"mape", s.stats.mape()},
                             {"mean_signed_error", s.stats.mspe()},
                             {"n", s.stats.n},
                             {"below_1mib", band_json(s.small)},
                             {"from_1mib", band_json(s.large)},
                             {"algorithms", s.algorithms}});
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} — {} all-reduce vs Vidur all_reduce.csv (single-node rows)\n", c.title(),
      c.params.allreduce_algorithm == AllReduceAlgorithm::kVllmCustom
          ? "vLLM custom (NCCL's faster of ring and NVLS above its size limit)"
          : "NCCL (the faster of ring and, on a multicast NVSwitch above 2 GPUs, NVLS)");
  out += fmt::format("  interconnect: {}\n", v.interconnect);
  for (const auto& s : v.slices) {
    std::string algorithms;
    for (const auto& [name, n] : s.algorithms) {
      algorithms += fmt::format("{}{} {}", algorithms.empty() ? "" : ", ", name, n);
    }
    out += fmt::format(
        "  {:<48} {:<16} p={}  MAPE {:6.2f}% (signed {:+7.2f}%)  < 1 MiB {:6.2f}%  ≥ 1 MiB "
        "{:6.2f}% (signed {:+7.2f}%)  n={}  [{}]\n",
        s.file, s.topology, s.workers, s.stats.mape(), s.stats.mspe(), s.small.mape(),
        s.large.mape(), s.large.mspe(), s.stats.n, algorithms);
  }
  return out;
}

}  // namespace servesim
