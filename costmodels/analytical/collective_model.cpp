#include "costmodels/analytical/collective_model.hpp"

#include <algorithm>
#include <limits>

#include <boost/graph/adjacency_list.hpp>

#include "sim/input_error.hpp"

namespace servesim {
namespace {

struct Link {
  double bytes_per_ns = 0;
};
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, Link>;

}  // namespace

TpTopology::TpTopology(int p, const std::string& kind, const GpuSpec& gpu,
                       const AnalyticalParams& params)
    : p_(p), hop_latency_ns_(params.hop_latency_ns) {
  if (kind != "nvlink" && kind != "pairwise_nvlink" && kind != "pcie") {
    throw InputError("unknown topology '" + kind + "' (known: nvlink, pairwise_nvlink, pcie)");
  }
  const double nvlink = gpu.nvlink_gb_per_s / 2 * params.nvlink_efficiency;  // one direction
  const double pcie = gpu.pcie_gb_per_s * params.pcie_efficiency;
  const bool has_nvlink = gpu.nvlink_gb_per_s > 0;
  Graph graph(static_cast<std::size_t>(p));
  for (int a = 0; a < p; ++a) {
    for (int b = a + 1; b < p; ++b) {
      bool nv = has_nvlink && kind == "nvlink";
      if (kind == "pairwise_nvlink") nv = has_nvlink && a / 2 == b / 2;
      boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b),
                      Link{nv ? nvlink : pcie}, graph);
    }
  }
  bottleneck_ = std::numeric_limits<double>::infinity();
  for (int a = 0; a < p && p > 1; ++a) {
    const auto [e, found] =
        boost::edge(static_cast<std::size_t>(a), static_cast<std::size_t>((a + 1) % p), graph);
    if (found) bottleneck_ = std::min(bottleneck_, graph[e].bytes_per_ns);
  }
  if (p <= 1) bottleneck_ = 0;
}

double TpTopology::all_reduce_ns(double bytes) const {
  if (p_ <= 1) return 0;
  const double p = p_;
  return 2 * (p - 1) / p * bytes / bottleneck_ + 2 * (p - 1) * hop_latency_ns_;
}

}  // namespace servesim
