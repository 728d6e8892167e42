#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/replica.hpp"
#include "sim/engine/time.hpp"
#include "sim/hardware/cluster_spec.hpp"

namespace servesim {

// A replica's place in the cluster.
struct NodePlacement {
  int node = 0;
  int first_gpu = 0;  // cluster-wide GPU index of its first GPU
  int gpus = 1;       // tp × pp
};

// Places the fleet's replicas on nodes (ClusterSpec above).
std::vector<NodePlacement> place_replicas(const Fleet& fleet, int gpus_per_node);

// Transfers of KV between replicas over a cluster graph (Boost.Graph): a vertex per GPU, per
// node an NVSwitch (GPUs with NVLink that is not a bridge), bridge edges between GPU pairs
// (pairwise NVLink), a PCIe host per node, and one network fabric every GPU reaches through its
// NIC. Each directed edge has a bandwidth and a latency; a flow takes the fastest path for a
// 1 MiB message (Dijkstra), which is NVLink inside a node when the GPUs have it, else PCIe, and
// the NICs between nodes. A transfer is one flow per GPU shard pair (the KV of a replica is spread
// over its tp × pp GPUs; m = max(GPUs of source, of destination) flows, flow j from source GPU
// j mod n_src to destination GPU j mod n_dst, each 1/m of the bytes). A flow waits out its path's
// latency, then moves its bytes at a rate that is the max-min fair share of every edge it
// crosses, recomputed whenever a flow starts or ends (progressive filling). A transfer ends when
// its last flow ends. Deterministic; not thread-safe.
class LinkNetwork {
 public:
  LinkNetwork(const Fleet& fleet, const ClusterSpec& cluster);

  const std::vector<NodePlacement>& placement() const { return placement_; }
  // Starts moving `bytes` of KV from replica `src` to `dst` at `now`; `id` names the transfer in
  // advance's output. Precondition: bytes > 0, src != dst.
  void start(std::int64_t id, ReplicaId src, ReplicaId dst, double bytes, SimTime now);
  // The next instant a flow starts moving or ends (or a transfer ended unreported: now); -1 when
  // no flow is in the network.
  SimTime next_change() const;
  // Moves time to `now` (≥ the last call's): advances the bytes of moving flows, ends flows that
  // are through, starts flows whose latency is over, re-shares bandwidth; appends the ids of the
  // transfers that ended to `done` (in the order their last flows ended, then by start).
  void advance(SimTime now, std::vector<std::int64_t>& done);
  bool idle() const { return flows_.empty() && ended_.empty(); }

  // The time one flow of `bytes` alone in the network would take from GPU a to GPU b.
  SimTime solo_time_ns(int gpu_a, int gpu_b, double bytes) const;

  // Link statistics: bytes carried by each edge so far.
  struct LinkStats {
    std::string name;     // "gpu3>nvswitch0", "gpu3>nic", …
    double gb_per_s = 0;  // its bandwidth
    double bytes = 0;
  };
  std::vector<LinkStats> link_stats() const;

 private:
  struct Edge {
    std::string name;
    double bytes_per_ns = 0;
    SimTime latency_ns = 0;
    double carried = 0;
    // share()'s scratch: moving flows not yet frozen on it, bandwidth not yet shared, full.
    int users = 0;
    double left = 0;
    bool full = false;
  };
  struct Flow {
    std::int64_t transfer = 0;
    std::vector<int> path;  // edge indices
    SimTime moving_at = 0;  // when its latency is over
    double remaining = 0;   // bytes
    double rate = 0;        // bytes per ns while moving
  };
  struct Path {
    std::vector<int> edges;
    SimTime latency_ns = 0;
  };
  const Path& path(int gpu_a, int gpu_b) const;
  void share();  // max-min fair rates of the moving flows

  std::vector<NodePlacement> placement_;
  std::vector<Edge> edges_;
  struct Graph;  // the Boost.Graph adjacency list (link_network.cpp)
  std::shared_ptr<const Graph> graph_;
  int gpus_ = 0;
  mutable std::unordered_map<std::int64_t, Path> paths_;  // per a × gpus + b, on first use
  std::vector<Flow> flows_;
  std::vector<std::int64_t> open_flows_;  // per transfer slot: flows not yet ended
  // Transfers that ended while start() advanced time to its own instant: the next advance()
  // reports them, and next_change() is that instant until it has.
  std::vector<std::int64_t> ended_;
  SimTime now_ = 0;
};

}  // namespace servesim
