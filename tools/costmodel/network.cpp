#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;

std::string run_network(const CostmodelArgs& a) {
  Context c = load(a, false);
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
