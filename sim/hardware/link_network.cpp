#include "sim/hardware/link_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <fmt/format.h>

namespace servesim {

namespace {
constexpr double kRouteBytes = 1024.0 * 1024.0;  // the message a path is chosen for
}  // namespace

struct LinkNetwork::Graph {
  struct EdgeProp {
    int index = 0;      // into edges_
    double weight = 0;  // ns for kRouteBytes
  };
  using Adjacency = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
                                          boost::no_property, EdgeProp>;
  explicit Graph(std::size_t vertices) : g(vertices) {}
  Adjacency g;
};

std::vector<NodePlacement> place_replicas(const Fleet& fleet, int gpus_per_node) {
  std::vector<NodePlacement> out;
  int gpu = 0;  // next free GPU
  for (const auto& r : fleet) {
    const int n = r->spec.tp * r->spec.pp;
    const int used = gpu % gpus_per_node;
    if (used != 0 && used + n > gpus_per_node) gpu += gpus_per_node - used;  // a new node
    out.push_back({gpu / gpus_per_node, gpu, n});
    gpu += n;
  }
  return out;
}

LinkNetwork::LinkNetwork(const Fleet& fleet, const ClusterSpec& cluster)
    : placement_(place_replicas(fleet, cluster.gpus_per_node)) {
  if (!placement_.empty()) gpus_ = placement_.back().first_gpu + placement_.back().gpus;
  const int nodes = gpus_ > 0 ? (gpus_ - 1) / cluster.gpus_per_node + 1 : 0;
  // Vertices: GPUs [0, gpus), NVSwitch of node k at gpus + k, PCIe host of node k at
  // gpus + nodes + k, the fabric last.
  const auto nvswitch = [&](int node) { return gpus_ + node; };
  const auto host = [&](int node) { return gpus_ + nodes + node; };
  const int fabric = gpus_ + 2 * nodes;
  auto graph = std::make_shared<Graph>(static_cast<std::size_t>(fabric + 1));
  const auto add = [&](int a, int b, std::string name, double gb_per_s, double latency_us) {
    Edge e;
    e.name = std::move(name);
    e.bytes_per_ns = gb_per_s;  // 1 GB/s = 1 B/ns
    e.latency_ns = std::llround(latency_us * 1e3);
    const double weight = static_cast<double>(e.latency_ns) + kRouteBytes / e.bytes_per_ns;
    edges_.push_back(std::move(e));
    boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b),
                    Graph::EdgeProp{static_cast<int>(edges_.size()) - 1, weight}, graph->g);
  };
  const auto both = [&](int gpu, int other, const std::string& other_name, double gb_per_s,
                        double latency_us) {
    add(gpu, other, fmt::format("gpu{}>{}", gpu, other_name), gb_per_s, latency_us / 2);
    add(other, gpu, fmt::format("{}>gpu{}", other_name, gpu), gb_per_s, latency_us / 2);
  };
  // Each GPU's kind and the links its replica names (NVLink to a switch, a bridge to its pair,
  // or PCIe only).
  std::vector<std::pair<const GpuSpec*, std::string>> gpu_of(static_cast<std::size_t>(gpus_));
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    for (int k = 0; k < placement_[i].gpus; ++k) {
      gpu_of[static_cast<std::size_t>(placement_[i].first_gpu) + static_cast<std::size_t>(k)] = {
          fleet[i]->spec.gpu, fleet[i]->spec.links()};
    }
  }
  for (int gpu = 0; gpu < gpus_; ++gpu) {
    const auto& [spec, links] = gpu_of[static_cast<std::size_t>(gpu)];
    if (spec == nullptr) continue;  // left free by the placement
    const int node = gpu / cluster.gpus_per_node;
    const double nvlink = cluster.copy_bytes_per_ns(*spec, true);
    if (links == "nvlink") {
      both(gpu, nvswitch(node), fmt::format("nvswitch{}", node), nvlink, cluster.nvlink_latency_us);
    } else if (links == "pairwise_nvlink" && gpu % 2 == 0 && gpu + 1 < gpus_ &&
               (gpu + 1) / cluster.gpus_per_node == node &&
               gpu_of[static_cast<std::size_t>(gpu) + 1].second == "pairwise_nvlink") {
      both(gpu, gpu + 1, fmt::format("gpu{}", gpu + 1), nvlink, cluster.nvlink_latency_us);
    }
    if (spec->pcie_gb_per_s > 0) {
      both(gpu, host(node), fmt::format("host{}", node), cluster.copy_bytes_per_ns(*spec, false),
           cluster.nvlink_latency_us);
    }
    add(gpu, fabric, fmt::format("gpu{}>nic", gpu), cluster.nic_gb_per_s,
        cluster.nic_latency_us / 2);
    add(fabric, gpu, fmt::format("nic>gpu{}", gpu), cluster.nic_gb_per_s,
        cluster.nic_latency_us / 2);
  }
  graph_ = std::move(graph);
}

const LinkNetwork::Path& LinkNetwork::path(int gpu_a, int gpu_b) const {
  const std::int64_t key = static_cast<std::int64_t>(gpu_a) * gpus_ + gpu_b;
  if (auto it = paths_.find(key); it != paths_.end()) return it->second;
  const auto& g = graph_->g;
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::size_t> pred(n);
  std::vector<double> dist(n);
  // Stops once gpu_b is settled (a GPU of the same node is settled before the fabric is).
  struct Reached {};
  struct StopAt : boost::default_dijkstra_visitor {
    std::size_t target;
    explicit StopAt(std::size_t t) : target(t) {}
    void examine_vertex(std::size_t v, const Graph::Adjacency&) const {
      if (v == target) throw Reached{};
    }
  };
  try {
    boost::dijkstra_shortest_paths(g, static_cast<std::size_t>(gpu_a),
                                   boost::predecessor_map(pred.data())
                                       .distance_map(dist.data())
                                       .weight_map(boost::get(&Graph::EdgeProp::weight, g))
                                       .visitor(StopAt(static_cast<std::size_t>(gpu_b))));
  } catch (const Reached&) {
  }
  if (pred[static_cast<std::size_t>(gpu_b)] == static_cast<std::size_t>(gpu_b)) {
    throw std::logic_error(fmt::format("no link path from GPU {} to GPU {}", gpu_a, gpu_b));
  }
  Path p;
  for (std::size_t v = static_cast<std::size_t>(gpu_b); v != static_cast<std::size_t>(gpu_a);) {
    const std::size_t u = pred[v];
    // The cheapest of parallel edges u → v is the one Dijkstra relaxed.
    int best = -1;
    double best_w = std::numeric_limits<double>::infinity();
    for (auto [it, end] = boost::out_edges(u, g); it != end; ++it) {
      if (boost::target(*it, g) == v && g[*it].weight < best_w) {
        best_w = g[*it].weight;
        best = g[*it].index;
      }
    }
    p.edges.push_back(best);
    p.latency_ns += edges_[static_cast<std::size_t>(best)].latency_ns;
    v = u;
  }
  std::reverse(p.edges.begin(), p.edges.end());
  return paths_.emplace(key, std::move(p)).first->second;
}

SimTime LinkNetwork::solo_time_ns(int gpu_a, int gpu_b, double bytes) const {
  const Path& p = path(gpu_a, gpu_b);
  double rate = std::numeric_limits<double>::infinity();
  for (const int e : p.edges)
    rate = std::min(rate, edges_[static_cast<std::size_t>(e)].bytes_per_ns);
  return p.latency_ns + static_cast<SimTime>(std::ceil(bytes / rate));
}

void LinkNetwork::start(std::int64_t id, ReplicaId src, ReplicaId dst, double bytes, SimTime now) {
  if (!(bytes > 0) || src == dst) throw std::logic_error("LinkNetwork::start: bad transfer");
  // Flows may end on the way to `now` (one due at this very instant whose event has not run):
  // kept for the next advance(), which reports them.
  std::vector<std::int64_t> ended;
  advance(now, ended);
  ended_.insert(ended_.end(), ended.begin(), ended.end());
  const NodePlacement& a = placement_[static_cast<std::size_t>(src)];
  const NodePlacement& b = placement_[static_cast<std::size_t>(dst)];
  const int m = std::max(a.gpus, b.gpus);
  if (static_cast<std::size_t>(id) >= open_flows_.size()) {
    open_flows_.resize(static_cast<std::size_t>(id) + 1, 0);
  }
  open_flows_[static_cast<std::size_t>(id)] = m;
  for (int j = 0; j < m; ++j) {
    const Path& p = path(a.first_gpu + j % a.gpus, b.first_gpu + j % b.gpus);
    flows_.push_back(Flow{id, p.edges, now + p.latency_ns, bytes / m, 0});
  }
  share();
}

SimTime LinkNetwork::next_change() const {
  if (!ended_.empty()) return now_;
  SimTime next = -1;
  for (const Flow& f : flows_) {
    const SimTime t =
        f.moving_at > now_
            ? f.moving_at
            : now_ + std::max<SimTime>(1, static_cast<SimTime>(std::ceil(f.remaining / f.rate)));
    if (next < 0 || t < next) next = t;
  }
  return next;
}

void LinkNetwork::advance(SimTime now, std::vector<std::int64_t>& done) {
  if (now < now_) throw std::logic_error("LinkNetwork::advance: time went back");
  done.insert(done.end(), ended_.begin(), ended_.end());
  ended_.clear();
  const double dt = static_cast<double>(now - now_);
  bool changed = false;
  for (Flow& f : flows_) {
    if (f.moving_at > now_) {
      if (f.moving_at <= now) changed = true;  // starts to move (its rate is set below)
      continue;
    }
    const double moved = std::min(f.remaining, f.rate * dt);
    f.remaining -= moved;
    for (const int e : f.path) edges_[static_cast<std::size_t>(e)].carried += moved;
  }
  now_ = now;
  // A flow less than one nanosecond of its rate from the end is through (next_change rounds up).
  auto through = [](const Flow& f) { return f.rate > 0 && f.remaining <= f.rate; };
  for (const Flow& f : flows_) {
    if (f.moving_at > now_ || !through(f)) continue;
    for (const int e : f.path) edges_[static_cast<std::size_t>(e)].carried += f.remaining;
    changed = true;
    if (--open_flows_[static_cast<std::size_t>(f.transfer)] == 0) done.push_back(f.transfer);
  }
  flows_.erase(std::remove_if(flows_.begin(), flows_.end(),
                              [&](const Flow& f) { return f.moving_at <= now_ && through(f); }),
               flows_.end());
  if (changed) share();
}

void LinkNetwork::share() {
  // Progressive filling: raise every unfrozen flow's rate together until an edge is full; freeze
  // the flows crossing it; repeat. Only the edges moving flows cross are visited.
  std::vector<int> used;  // edges with moving flows
  for (Flow& f : flows_) {
    f.rate = 0;
    if (f.moving_at > now_) continue;
    for (const int e : f.path) {
      Edge& edge = edges_[static_cast<std::size_t>(e)];
      if (edge.users++ == 0) {
        used.push_back(e);
        edge.left = edge.bytes_per_ns;
      }
    }
  }
  std::vector<Flow*> open;
  for (Flow& f : flows_) {
    if (f.moving_at <= now_) open.push_back(&f);
  }
  while (!open.empty()) {
    double fill = std::numeric_limits<double>::infinity();
    for (const int e : used) {
      const Edge& edge = edges_[static_cast<std::size_t>(e)];
      if (edge.users > 0) fill = std::min(fill, edge.left / edge.users);
    }
    for (const int e : used) {
      Edge& edge = edges_[static_cast<std::size_t>(e)];
      edge.full = edge.users > 0 && edge.left / edge.users <= fill * (1 + 1e-12);
    }
    std::size_t kept = 0;
    for (Flow* f : open) {
      f->rate += fill;
      bool frozen = false;
      for (const int e : f->path) frozen = frozen || edges_[static_cast<std::size_t>(e)].full;
      for (const int e : f->path) {
        Edge& edge = edges_[static_cast<std::size_t>(e)];
        edge.left -= fill;
        if (frozen) --edge.users;
      }
      if (!frozen) open[kept++] = f;
    }
    open.resize(kept);
  }
  for (const int e : used) edges_[static_cast<std::size_t>(e)].users = 0;
}

std::vector<LinkNetwork::LinkStats> LinkNetwork::link_stats() const {
  std::vector<LinkStats> out;
  for (const Edge& e : edges_) out.push_back({e.name, e.bytes_per_ns, e.carried});
  return out;
}

}  // namespace servesim
