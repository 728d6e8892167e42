#include "costmodels/analytical/collective_model.hpp"

#include <algorithm>
#include <limits>

#include <boost/graph/adjacency_list.hpp>

#include "sim/config/input_error.hpp"
#include "sim/hardware/cluster_spec.hpp"

namespace servesim {
namespace {

struct Link {
  double bytes_per_ns = 0;
};
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, Link>;

// Achieved one-direction bandwidth of an NVLink or PCIe link (bytes/ns).
double link_bytes_per_ns(bool nvlink, const GpuSpec& gpu, const AnalyticalParams& params) {
  return nvlink ? gpu.nvlink_gb_per_s / 2 * params.nvlink_efficiency
                : gpu.pcie_gb_per_s * params.pcie_efficiency;
}

// One step of a ring over PCIe takes this many times a step over NVLink: NCCL's own tuning
// model (src/graph/tuning.cc, hwLat, Ring/Simple: 5.7 us on PCI against 3.4 us on NVLink).
constexpr double kPcieOverNvlinkStepLatency = 5.7 / 3.4;

}  // namespace

TpTopology::TpTopology(int p, const std::string& kind, const GpuSpec& gpu,
                       const AnalyticalParams& params)
    : p_(p),
      hop_latency_ns_(params.hop_latency_ns),
      floor_ns_(params.collective_floor_ns),
      custom_floor_ns_(params.custom_allreduce_floor_ns),
      custom_max_bytes_(params.custom_allreduce_max_bytes) {
  // Unknown names, NVLink on a GPU without it, all-to-all NVLink on bridged cards.
  if (const std::string why = gpu.topology_problem(kind); !why.empty()) throw InputError(why);
  Graph graph(static_cast<std::size_t>(p));
  bool all_nvlink = true;
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      const bool nv = gpu.nvlink_between(a, b, kind);
      all_nvlink = all_nvlink && nv;
      boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b),
                      Link{link_bytes_per_ns(nv, gpu, params)}, graph);
    }
  }
  bottleneck_ = std::numeric_limits<double>::infinity();
  for (int a = 0; a < p && p > 1; ++a) {
    const auto [e, found] =
        boost::edge(static_cast<std::size_t>(a), static_cast<std::size_t>((a + 1) % p), graph);
    if (found) bottleneck_ = std::min(bottleneck_, graph[e].bytes_per_ns);
  }
  if (p <= 1) bottleneck_ = 0;
  if (kind == "pcie" && p > 1) {
    // Every hop of the ring crosses the host bridge, and all p hops move at once: each gets at
    // most its share of the bridge. A step waits out PCIe's longer latency.
    if (gpu.host_gb_per_s > 0) bottleneck_ = std::min(bottleneck_, gpu.host_gb_per_s / p);
    hop_latency_ns_ = params.hop_latency_ns * kPcieOverNvlinkStepLatency;
  }
  custom_ = params.allreduce_algorithm == AllReduceAlgorithm::kVllmCustom && all_nvlink &&
            (p == 2 || p == 4 || p == 6 || p == 8);
  nvls_ = gpu.nvswitch_multicast && kind == "nvlink" && all_nvlink && p > 2;
}

double TpTopology::ring_ns(double bytes) const {
  const double p = p_;
  return floor_ns_ + 2 * (p - 1) * hop_latency_ns_ + 2 * (p - 1) / p * bytes / bottleneck_;
}

double TpTopology::nvls_ns(double bytes) const {
  const double p = p_;
  return floor_ns_ + 2 * hop_latency_ns_ + (p + 1) / p * bytes / bottleneck_;
}

TpTopology::Algorithm TpTopology::algorithm(double bytes) const {
  if (p_ <= 1) return Algorithm::kNone;
  if (custom_ && bytes < custom_max_bytes_) {
    const bool one_stage =
        p_ == 2 || (p_ <= 4 && bytes < 512 * 1024.0) || (p_ <= 8 && bytes < 256 * 1024.0);
    return one_stage ? Algorithm::kCustomOneStage : Algorithm::kCustomTwoStage;
  }
  return nvls_ && nvls_ns(bytes) < ring_ns(bytes) ? Algorithm::kNvls : Algorithm::kRing;
}

double TpTopology::all_gather_ns(double bytes) const {
  if (p_ <= 1) return 0;
  const double p = p_;
  return floor_ns_ + (p - 1) * hop_latency_ns_ + (p - 1) / p * bytes / bottleneck_;
}

double TpTopology::all_reduce_ns(double bytes) const {
  const double p = p_;
  switch (algorithm(bytes)) {
    case Algorithm::kNone:
      return 0;
    case Algorithm::kCustomOneStage:
      return custom_floor_ns_ + (p - 1) * bytes / bottleneck_;
    case Algorithm::kCustomTwoStage:
      return custom_floor_ns_ + 2 * (p - 1) / p * bytes / bottleneck_;
    case Algorithm::kNvls:
      return nvls_ns(bytes);
    case Algorithm::kRing:
      break;
  }
  return ring_ns(bytes);
}

const char* TpTopology::algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kNone:
      return "none";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kCustomOneStage:
      return "custom one-stage";
    case Algorithm::kCustomTwoStage:
      return "custom two-stage";
  }
  return "none";
}

double pipeline_boundary_ns(const TpTopology& group, int pp, int stage, const std::string& topology,
                            const GpuSpec& gpu, const ClusterSpec& cluster, double bytes) {
  const int tp = group.size();
  const bool same_node = !cluster.stage_boundary_crosses_nodes(tp, pp, stage);
  const bool nv = gpu.nvlink_between(stage * tp, (stage + 1) * tp, topology);
  return cluster.copy_ns(gpu, same_node, nv, bytes / tp) + group.all_gather_ns(bytes);
}

double pipeline_transfers_ns(const TpTopology& group, int pp, const std::string& topology,
                             const GpuSpec& gpu, const ClusterSpec& cluster, double bytes) {
  double t = 0;
  for (int stage = 0; stage + 1 < pp; ++stage) {
    t += pipeline_boundary_ns(group, pp, stage, topology, gpu, cluster, bytes);
  }
  return t;
}

}  // namespace servesim
