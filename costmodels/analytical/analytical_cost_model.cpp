#include "costmodels/analytical/analytical_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "sim/hardware/memory_planner.hpp"
#include "sim/util/units.hpp"

namespace servesim {
// Per-replica tables: index i holds the cost of i tokens (or i requests); entry 0 is unused.
struct AnalyticalCostModel::Prepared {
  explicit Prepared(LayerPricer p) : pricer(std::move(p)) {}
  LayerPricer pricer;
  double layers = 1;
  std::vector<int> stage_layers;              // layers per pipeline stage, vLLM's split
  std::vector<LayerPricer::LayerCost> eager;  // per layer
  std::vector<LayerPricer::LayerCost> graph;
  // An MoE replica laid out by expert or attention data parallelism: the layer's two parts
  // (LayerPricer::group_side_ns by a group's tokens, expert_side_ns by the step's), in place of
  // eager and graph.
  std::vector<LayerPricer::LayerCost> group_eager, group_graph, expert_eager, expert_graph;
  std::vector<PricedNs> edge_tokens_eager;
  std::vector<PricedNs> edge_tokens_graph;
  RequestEdgeTable heads;  // LM head + sampling by request count
};

AnalyticalCostModel::AnalyticalCostModel(Options options) : options_(std::move(options)) {}
AnalyticalCostModel::~AnalyticalCostModel() = default;

AnalyticalCostModel::Options AnalyticalCostModel::parse(const ConfigNode& node) {
  node.check_keys({"kind", "terms", "table_max_tokens", "engine", "sampling"});
  Options o;
  if (auto t = node.find("terms")) o.terms.apply(*t);
  o.table_max_tokens =
      static_cast<int>(node.get_positive_int("table_max_tokens", o.table_max_tokens));
  o.graph_table_max_tokens = std::min(o.graph_table_max_tokens, o.table_max_tokens);
  if (auto e = node.find("engine")) o.engine = EngineProfile::load(*e);
  if (auto s = node.find("sampling")) {
    s->require_map("the requests' sampling ({top_p: bool, penalties: bool})");
    s->check_keys({"top_p", "penalties"});
    o.sampling_top_p = s->get_bool("top_p", false);
    o.sampling_penalties = s->get_bool("penalties", false);
  }
  return o;
}

double AnalyticalCostModel::idle_power_w(const ReplicaSpec& r) const {
  return prepare(r).pricer.idle_w() * r.tp * r.pp;
}

SimTime AnalyticalCostModel::request_overhead_ns() const {
  return options_.engine ? std::llround(options_.engine->request_overhead_ns) : 0;
}

LayerPricer AnalyticalCostModel::pricer(const ReplicaSpec& replica) const {
  AnalyticalParams params = AnalyticalParams::for_gpu(*replica.gpu);
  if (options_.engine) options_.engine->apply(*replica.gpu, params);
  params.sampling_top_p = options_.sampling_top_p;
  params.sampling_penalties = options_.sampling_penalties;
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
  p->stage_layers = pp_stage_layers(r.model->num_layers, r.pp);
  const auto n = static_cast<std::size_t>(options_.table_max_tokens) + 1;
  const bool split = p->pricer.moe_parallel();
  const auto fill = [&](std::vector<LayerPricer::LayerCost>& group,
                        std::vector<LayerPricer::LayerCost>& expert, std::size_t size, bool graph) {
    group.resize(size);
    expert.resize(size);
    for (std::size_t i = 1; i < size; ++i) {
      group[i] = p->pricer.group_side_ns(static_cast<double>(i), graph);
      expert[i] = p->pricer.expert_side_ns(static_cast<double>(i), graph);
    }
  };
  if (split) {
    fill(p->group_eager, p->expert_eager, n, false);
    if (r.cuda_graphs) {
      // The experts of a graph step see every group's tokens: their table spans the eager one.
      std::vector<LayerPricer::LayerCost> unused;
      fill(p->group_graph, unused, static_cast<std::size_t>(options_.graph_table_max_tokens) + 1,
           true);
      fill(unused, p->expert_graph, n, true);
    }
  }
  p->eager.resize(split ? 0 : n);
  p->edge_tokens_eager.resize(n);
  for (std::size_t i = 1; i < n; ++i) {
    const auto t = static_cast<double>(i);
    if (!split) p->eager[i] = p->pricer.layer_ns(t, false);
    PricedNs& e = p->edge_tokens_eager[i];
    e.ns = p->pricer.edge_tokens_ns(t, false, &e.nj);
  }
  if (r.cuda_graphs) {
    const auto g = static_cast<std::size_t>(options_.graph_table_max_tokens) + 1;
    p->graph.resize(split ? 0 : g);
    p->edge_tokens_graph.resize(g);
    for (std::size_t i = 1; i < g; ++i) {
      const auto t = static_cast<double>(i);
      if (!split) p->graph[i] = p->pricer.layer_ns(t, true);
      PricedNs& e = p->edge_tokens_graph[i];
      e.ns = p->pricer.edge_tokens_ns(t, true, &e.nj);
    }
  }
  p->heads = RequestEdgeTable(p->pricer);
  // cuBLAS never needs a slower kernel for fewer tokens (it could pad): keep the tables
  // non-decreasing so a tile switch cannot make a bigger batch cheaper.
  auto monotone = [](std::vector<LayerPricer::LayerCost>& t) {
    for (std::size_t i = 2; i < t.size(); ++i) {
      if (t[i].total() < t[i - 1].total()) t[i] = t[i - 1];
    }
  };
  auto monotone_edges = [](std::vector<PricedNs>& e) {
    for (std::size_t i = 2; i < e.size(); ++i) {
      if (e[i].ns < e[i - 1].ns) e[i] = e[i - 1];
    }
  };
  for (auto* t : {&p->eager, &p->graph, &p->group_eager, &p->group_graph, &p->expert_eager,
                  &p->expert_graph}) {
    monotone(*t);
  }
  monotone_edges(p->edge_tokens_eager);
  monotone_edges(p->edge_tokens_graph);
  return p;
}

StepCost AnalyticalCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost cost;
  if (batch.empty()) return cost;
  const Prepared& p = prepare(replica);
  if (p.pricer.moe_parallel()) return moe_parallel_step(batch, replica, p);
  const LayerPricer& pr = p.pricer;
  const std::int64_t tokens = batch.total_tokens();
  // Kernels replayed from a graph (full or piecewise) get the graph launch floors and host floor;
  // attention is inside the graph only in a full one (piecewise graphs launch it outside).
  const StepLaunch launch = replica.step_launch(!batch.prefills.empty(), tokens);
  const bool graph = launch != StepLaunch::kEager;
  const auto requests = static_cast<double>(batch.num_requests());

  LayerPricer::LayerCost layer;
  PricedNs edges;
  const auto& table = graph ? p.graph : p.eager;
  if (tokens < static_cast<std::int64_t>(table.size())) {
    layer = table[static_cast<std::size_t>(tokens)];
    edges = (graph ? p.edge_tokens_graph : p.edge_tokens_eager)[static_cast<std::size_t>(tokens)];
  } else {
    layer = pr.layer_ns(static_cast<double>(tokens), graph);
    edges.ns = pr.edge_tokens_ns(static_cast<double>(tokens), graph, &edges.nj);
  }
  // Energy above idle on one GPU of each stage (nJ), beside the times.
  double attn_nj = 0;
  double edge_nj = edges.nj;
  const AttentionWork work = AttentionWork::of(batch, pr.shapes(), replica.kv_dtype_bytes);
  const double attn = pr.attention_ns(work, launch == StepLaunch::kFullGraph, &attn_nj);
  const double head =
      p.heads.ns(pr, static_cast<std::size_t>(batch.num_requests()), graph, &edge_nj);
  const double host = pr.host_ns(requests, graph);

  cost[CostComponent::kGemm] = p.layers * layer.gemm;
  cost[CostComponent::kLight] = p.layers * layer.light;
  cost[CostComponent::kCollective] =
      p.layers * layer.comm + pr.stage_transfers_ns(static_cast<double>(tokens), &edge_nj);
  cost[CostComponent::kAttention] = p.layers * attn;
  cost[CostComponent::kEmbedding] = edges.ns + head;
  cost[CostComponent::kHost] = host;
  double total = 0;
  for (double v : cost.breakdown_ns) total += v;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  if (replica.pp > 1) {
    // Stage s: its layers (vLLM's split), the embedding on the first, the final norm, LM head
    // and sampler on the last, the send across its boundary on all but the last.
    const double per_layer = layer.gemm + layer.light + layer.comm + attn;
    const double norm = pr.final_norm_ns(static_cast<double>(tokens), graph);
    const std::vector<int>& stages = p.stage_layers;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      double t = stages[s] * per_layer;
      if (s == 0) t += edges.ns - norm;
      if (s + 1 == stages.size()) {
        t += norm + head;
      } else {
        t += pr.stage_boundary_ns(static_cast<double>(tokens), static_cast<int>(s));
      }
      cost.stage_ns = std::max(cost.stage_ns, t);
    }
  }
  if (pr.idle_w() > 0) {
    // Every GPU of the replica idles through the step; each kernel adds its dynamic energy on
    // the tp GPUs of the stage running it (one batch in flight).
    const double gpus = static_cast<double>(replica.tp) * replica.pp;
    cost.energy_j =
        kJoulesPerWattNs * (gpus * pr.idle_w() * static_cast<double>(cost.total_ns) +
                            replica.tp * (p.layers * (layer.energy_nj + attn_nj) + edge_nj));
  }
  return cost;
}

}  // namespace servesim

namespace servesim {

StepCost AnalyticalCostModel::moe_parallel_step(const BatchShape& batch, const ReplicaSpec& replica,
                                                const Prepared& p) const {
  StepCost cost;
  const LayerPricer& pr = p.pricer;
  const auto d = static_cast<std::size_t>(pr.attention_dp());
  // The groups' shares of the step: decodes dealt in turn, then each prefill chunk to the group
  // with the fewest tokens so far (the first such group on a tie).
  // Kept per thread across steps: this runs every step, and step() is called concurrently.
  thread_local std::vector<BatchShape> shares;
  thread_local std::vector<std::int64_t> load;
  shares.resize(d > 1 ? d : 0);
  for (BatchShape& s : shares) s.clear();
  if (d > 1) {
    for (std::size_t i = 0; i < batch.decode_contexts.size(); ++i) {
      shares[i % d].decode_contexts.push_back(batch.decode_contexts[i]);
    }
    load.assign(d, 0);
    for (std::size_t g = 0; g < d; ++g) load[g] = shares[g].num_decodes();
    for (const PrefillChunk& c : batch.prefills) {
      const auto g =
          static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      shares[g].prefills.push_back(c);
      load[g] += c.tokens;
    }
  }
  const std::int64_t tokens = batch.total_tokens();
  std::int64_t group_max_tokens = 0;
  for (const BatchShape& s : shares)
    group_max_tokens = std::max(group_max_tokens, s.total_tokens());
  if (d <= 1) group_max_tokens = tokens;
  const StepLaunch launch = replica.step_launch(!batch.prefills.empty(), group_max_tokens);
  const bool graph = launch != StepLaunch::kEager;
  const auto lookup = [&](const std::vector<LayerPricer::LayerCost>& table, std::int64_t t,
                          bool expert) {
    if (t <= 0) return LayerPricer::LayerCost{};
    if (t < static_cast<std::int64_t>(table.size())) return table[static_cast<std::size_t>(t)];
    return expert ? pr.expert_side_ns(static_cast<double>(t), graph)
                  : pr.group_side_ns(static_cast<double>(t), graph);
  };
  const LayerPricer::LayerCost experts =
      lookup(graph ? p.expert_graph : p.expert_eager, tokens, true);
  // The busiest group: its layers' own work and attention, its embedding, LM head and sampler.
  struct Group {
    LayerPricer::LayerCost layer;
    double attn = 0, attn_nj = 0;
    PricedNs edges;
    double head = 0, head_nj = 0;
    double requests = 0;
    double total(double layers) const { return layers * (layer.total() + attn) + edges.ns + head; }
  };
  const auto price_group = [&](const BatchShape& s) {
    Group g;
    const std::int64_t t = s.total_tokens();
    if (t <= 0) return g;
    g.layer = lookup(graph ? p.group_graph : p.group_eager, t, false);
    const auto& edge_table = graph ? p.edge_tokens_graph : p.edge_tokens_eager;
    if (t < static_cast<std::int64_t>(edge_table.size())) {
      g.edges = edge_table[static_cast<std::size_t>(t)];
    } else {
      g.edges.ns = pr.edge_tokens_ns(static_cast<double>(t), graph, &g.edges.nj);
    }
    const AttentionWork work = AttentionWork::of(s, pr.shapes(), replica.kv_dtype_bytes);
    g.attn = pr.attention_ns(work, launch == StepLaunch::kFullGraph, &g.attn_nj);
    g.head = p.heads.ns(pr, static_cast<std::size_t>(s.num_requests()), graph, &g.head_nj);
    g.requests = static_cast<double>(s.num_requests());
    return g;
  };
  Group busiest;
  if (d <= 1) {
    busiest = price_group(batch);
  } else {
    double longest = -1;
    for (const BatchShape& s : shares) {
      Group g = price_group(s);
      if (g.total(p.layers) > longest) {
        longest = g.total(p.layers);
        busiest = g;
      }
    }
  }
  const double host = pr.host_ns(busiest.requests, graph);
  const LayerPricer::LayerCost& g = busiest.layer;
  cost[CostComponent::kGemm] = p.layers * (g.gemm + experts.gemm);
  cost[CostComponent::kLight] = p.layers * (g.light + experts.light);
  cost[CostComponent::kCollective] =
      p.layers * (g.comm + experts.comm) +
      pr.stage_transfers_ns(static_cast<double>(group_max_tokens), nullptr);
  cost[CostComponent::kAttention] = p.layers * busiest.attn;
  cost[CostComponent::kEmbedding] = busiest.edges.ns + busiest.head;
  cost[CostComponent::kHost] = host;
  double total = 0;
  for (double v : cost.breakdown_ns) total += v;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  if (replica.pp > 1) {
    const double per_layer = g.total() + experts.total() + busiest.attn;
    const double norm = pr.final_norm_ns(static_cast<double>(group_max_tokens), graph);
    const std::vector<int>& stages = p.stage_layers;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      double t = stages[s] * per_layer;
      if (s == 0) t += busiest.edges.ns - norm;
      if (s + 1 == stages.size()) {
        t += norm + busiest.head;
      } else {
        t += pr.stage_boundary_ns(static_cast<double>(group_max_tokens), static_cast<int>(s));
      }
      cost.stage_ns = std::max(cost.stage_ns, t);
    }
  }
  if (pr.idle_w() > 0) {
    // Every GPU idles through the step; each adds the busiest group's kernels' dynamic energy
    // (the other groups wait for it at the MoE layers).
    const double gpus = static_cast<double>(replica.tp) * replica.pp;
    cost.energy_j = kJoulesPerWattNs *
                    (gpus * pr.idle_w() * static_cast<double>(cost.total_ns) +
                     replica.tp * (p.layers * (g.energy_nj + experts.energy_nj + busiest.attn_nj) +
                                   busiest.edges.nj + busiest.head_nj));
  }
  return cost;
}

}  // namespace servesim
