#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;

std::string run_kv_transfer(const CostmodelArgs& a) {
  Context c = load(a, false);
  const KvTransferValidation v = validate_kv_transfer(a.profiles, c.gpu, a.cluster);
  const ClusterSpec& k = a.cluster;
  if (a.json) {
    nlohmann::json j;
    c.stamp(j);
    j["cluster"] = {{"nvlink_efficiency", k.nvlink_efficiency},
                    {"nvlink_latency_us", k.nvlink_latency_us},
                    {"nic_gb_per_s", k.nic_gb_per_s},
                    {"nic_latency_us", k.nic_latency_us}};
    for (const auto& s : v.slices) {
      j["slices"].push_back({{"file", s.file},
                             {"topology", s.topology},
                             {"placement", s.same_node ? "one node" : "two nodes"},
                             {"all", band_json(s.all)},
                             {"below_1mib", band_json(s.small)},
                             {"from_1mib", band_json(s.large)}});
    }
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} — one KV copy between two GPUs (disaggregated serving's link model) vs Vidur "
      "send_recv.csv\n  NVLink at {} of peak + {} µs; NIC {} GB/s + {} µs\n",
      c.title(), k.nvlink_efficiency, k.nvlink_latency_us, k.nic_gb_per_s, k.nic_latency_us);
  for (const auto& s : v.slices) {
    out += fmt::format(
        "  {:<48} {:<16} {:<9}  MAPE {:6.2f}% (signed {:+7.2f}%)  < 1 MiB {:6.2f}%  ≥ 1 MiB "
        "{:6.2f}% (signed {:+7.2f}%)  n={}\n",
        s.file, s.topology, s.same_node ? "one node" : "two nodes", s.all.mape(), s.all.mspe(),
        s.small.mape(), s.large.mape(), s.large.mspe(), s.all.n);
  }
  return out;
}

}  // namespace servesim
