#include "costmodels/analytical/analytical_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace servesim {
// Per-replica tables: index i holds the cost of i tokens (or i requests); entry 0 is unused.
struct AnalyticalCostModel::Prepared {
  explicit Prepared(LayerPricer p) : pricer(std::move(p)) {}
  LayerPricer pricer;
  double layers = 1;
  std::vector<LayerPricer::LayerCost> eager;  // per layer
  std::vector<LayerPricer::LayerCost> graph;
  std::vector<double> edge_tokens_eager;
  std::vector<double> edge_tokens_graph;
  RequestEdgeTable heads;  // LM head + sampling by request count
};

AnalyticalCostModel::AnalyticalCostModel(Options options) : options_(options) {}
AnalyticalCostModel::~AnalyticalCostModel() = default;

AnalyticalCostModel::Options AnalyticalCostModel::parse(const ConfigNode& node) {
  node.check_keys({"kind", "terms", "table_max_tokens", "engine"});
  Options o;
  if (auto t = node.find("terms")) o.terms.apply(*t);
  o.table_max_tokens =
      static_cast<int>(node.get_positive_int("table_max_tokens", o.table_max_tokens));
  o.graph_table_max_tokens = std::min(o.graph_table_max_tokens, o.table_max_tokens);
  if (auto e = node.find("engine")) o.engine = EngineProfile::load(*e);
  return o;
}

SimTime AnalyticalCostModel::request_overhead_ns() const {
  return options_.engine ? std::llround(options_.engine->request_overhead_ns) : 0;
}

LayerPricer AnalyticalCostModel::pricer(const ReplicaSpec& replica) const {
  AnalyticalParams params = AnalyticalParams::for_gpu(*replica.gpu);
  if (options_.engine) options_.engine->apply(*replica.gpu, params);
  return LayerPricer(replica, params, options_.terms);
}

const AnalyticalCostModel::Prepared& AnalyticalCostModel::prepare(const ReplicaSpec& r) const {
  return cache_.get(r, [&] { return build(r); });
}

std::unique_ptr<AnalyticalCostModel::Prepared> AnalyticalCostModel::build(
    const ReplicaSpec& r) const {
  auto p = std::make_unique<Prepared>(pricer(r));
  // With pp stages a step still passes every layer, stage after stage (one batch in flight).
  p->layers = r.model->num_layers;
  const auto n = static_cast<std::size_t>(options_.table_max_tokens) + 1;
  p->eager.resize(n);
  p->edge_tokens_eager.resize(n);
  for (std::size_t i = 1; i < n; ++i) {
    const auto t = static_cast<double>(i);
    p->eager[i] = p->pricer.layer_ns(t, false);
    p->edge_tokens_eager[i] = p->pricer.edge_tokens_ns(t, false);
  }
  if (r.cuda_graphs) {
    const auto g = static_cast<std::size_t>(options_.graph_table_max_tokens) + 1;
    p->graph.resize(g);
    p->edge_tokens_graph.resize(g);
    for (std::size_t i = 1; i < g; ++i) {
      const auto t = static_cast<double>(i);
      p->graph[i] = p->pricer.layer_ns(t, true);
      p->edge_tokens_graph[i] = p->pricer.edge_tokens_ns(t, true);
    }
  }
  p->heads = RequestEdgeTable(p->pricer);
  // cuBLAS never needs a slower kernel for fewer tokens (it could pad): keep the tables
  // non-decreasing so a tile switch cannot make a bigger batch cheaper.
  auto monotone = [](std::vector<LayerPricer::LayerCost>& t, std::vector<double>& e) {
    for (std::size_t i = 2; i < t.size(); ++i) {
      if (t[i].total() < t[i - 1].total()) t[i] = t[i - 1];
      e[i] = std::max(e[i], e[i - 1]);
    }
  };
  monotone(p->eager, p->edge_tokens_eager);
  monotone(p->graph, p->edge_tokens_graph);
  return p;
}

StepCost AnalyticalCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost cost;
  if (batch.empty()) return cost;
  const Prepared& p = prepare(replica);
  const LayerPricer& pr = p.pricer;
  const std::int64_t tokens = batch.total_tokens();
  // Kernels replayed from a graph (full or piecewise) get the graph launch floors and host floor;
  // attention is inside the graph only in a full one (piecewise graphs launch it outside).
  const StepLaunch launch = replica.step_launch(!batch.prefills.empty(), tokens);
  const bool graph = launch != StepLaunch::kEager;
  const auto requests = static_cast<double>(batch.num_requests());

  LayerPricer::LayerCost layer;
  double edges = 0;
  const auto& table = graph ? p.graph : p.eager;
  if (tokens < static_cast<std::int64_t>(table.size())) {
    layer = table[static_cast<std::size_t>(tokens)];
    edges = (graph ? p.edge_tokens_graph : p.edge_tokens_eager)[static_cast<std::size_t>(tokens)];
  } else {
    layer = pr.layer_ns(static_cast<double>(tokens), graph);
    edges = pr.edge_tokens_ns(static_cast<double>(tokens), graph);
  }
  const AttentionWork work = AttentionWork::of(batch, pr.shapes(), replica.kv_dtype_bytes);
  const double attn = pr.attention_ns(work, launch == StepLaunch::kFullGraph);
  const double head = p.heads.ns(pr, static_cast<std::size_t>(batch.num_requests()), graph);
  const double host = pr.host_ns(requests, graph);

  cost[CostComponent::kGemm] = p.layers * layer.gemm;
  cost[CostComponent::kLight] = p.layers * layer.light;
  cost[CostComponent::kCollective] =
      p.layers * layer.comm + pr.stage_transfers_ns(static_cast<double>(tokens));
  cost[CostComponent::kAttention] = p.layers * attn;
  cost[CostComponent::kEmbedding] = edges + head;
  cost[CostComponent::kHost] = host;
  double total = 0;
  for (double v : cost.breakdown_ns) total += v;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  return cost;
}

}  // namespace servesim
