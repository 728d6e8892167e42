#include "sim/hardware/cluster_spec.hpp"

#include <fmt/format.h>

namespace servesim {

std::string ClusterSpec::stage_placement_problem(int tp, int pp) const {
  if (tp > gpus_per_node) {
    return fmt::format(
        "tp {} spans more than one node of {} GPUs (cluster.gpus_per_node): tensor parallelism is "
        "priced inside a node only (expected tp ≤ {})",
        tp, gpus_per_node, gpus_per_node);
  }
  if (tp * pp > gpus_per_node && gpus_per_node % tp != 0) {
    return fmt::format(
        "tp {} × pp {} takes several nodes of {} GPUs and a pipeline stage would straddle two "
        "(expected tp to divide cluster.gpus_per_node)",
        tp, pp, gpus_per_node);
  }
  return "";
}

}  // namespace servesim
