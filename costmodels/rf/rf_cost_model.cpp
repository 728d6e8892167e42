#include "costmodels/rf/rf_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <tuple>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/attention_work.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/units.hpp"

namespace servesim {
namespace fs = std::filesystem;
namespace {

std::string resolve(const ConfigNode& node, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || node.base_dir().empty()) return path;
  return (fs::path(node.base_dir()) / path).lexically_normal().string();
}

constexpr std::size_t idx(VidurOp op) { return static_cast<std::size_t>(op); }

bool is_gemm(std::size_t op) {
  return op == idx(VidurOp::kAttnPreProj) || op == idx(VidurOp::kAttnPostProj) ||
         op == idx(VidurOp::kMlpUpProj) || op == idx(VidurOp::kMlpDownProj);
}

}  // namespace

// Per-replica tables, index = tokens in the step (entry 0 unused), ns.
struct RfCostModel::Prepared {
  RfLoaded loaded;
  std::optional<LayerPricer> pricer;  // the replica's GPU, for the non-profiled parts
  std::optional<SpecScaler> scaler;   // rf_scaled only
  RequestEdgeTable heads;             // LM head + sampling by request count (analytical)
  double layers = 1;
  double hidden = 0;
  struct Row {
    double gemm = 0;
    double light = 0;
    double comm = 0;
    double edge = 0;  // emb + final norm (once per step)
    double total() const { return gemm + light + comm + edge; }
  };
  std::vector<Row> table;

  Row row(double tokens) const {
    Row r;
    std::array<double, kNumVidurOps> ratio;
    ratio.fill(1.0);
    if (scaler) ratio = scaler->ratios(tokens);
    const RfTables& t = loaded.tables;
    for (std::size_t op = 0; op < kNumVidurOps; ++op) {
      const double ms = t.ops[op](tokens);
      if (!std::isfinite(ms)) continue;
      const double ns = ms * kNsPerMsF * ratio[op];
      if (op == idx(VidurOp::kEmb)) {
        r.edge += ns;
      } else if (is_gemm(op)) {
        r.gemm += ns;
      } else {
        r.light += ns;
      }
    }
    const double norm = t.op_ms(VidurOp::kInputLayernorm, tokens);
    if (std::isfinite(norm)) r.edge += norm * kNsPerMsF * ratio[idx(VidurOp::kInputLayernorm)];
    r.light += pricer->light_ns(LightKernel::kKvWrite, pricer->kv_write_work(tokens), false);
    if (loaded.tables.tp > 1) {
      const double bytes = tokens * hidden * 2;
      const double one = t.all_reduce.empty() ? pricer->all_reduce_ns(bytes)
                                              : t.all_reduce(bytes) * kNsPerMsF *
                                                    (scaler ? scaler->collective_ratio() : 1);
      r.comm = 2 * one;
    }
    return r;
  }
};

RfCostModel::RfCostModel(Options options) : options_(std::move(options)) {}
RfCostModel::~RfCostModel() = default;

RfCostModel::Options RfCostModel::parse(const ConfigNode& node, Kind kind) {
  if (kind == Kind::kScaled) {
    node.check_keys({"kind", "gpu", "profiles", "network", "cache_dir", "trees", "depths",
                     "subsample", "cv_folds", "cv_trees", "seed", "threads", "table_max_tokens",
                     "scale"});
  } else {
    node.check_keys({"kind", "gpu", "profiles", "network", "cache_dir", "trees", "depths",
                     "subsample", "cv_folds", "cv_trees", "seed", "threads", "table_max_tokens"});
  }
  Options o;
  o.kind = kind;
  o.catalog = std::make_shared<Catalog>(Catalog::default_dirs());
  const ConfigNode gpu_node = node.at("gpu");
  const std::string gpu = gpu_node.as_string();
  o.home = &o.catalog->gpu(gpu, gpu_node);
  const ConfigNode profiles_node = node.at("profiles");
  try {
    o.gpu_dir =
        RfProfileSet::open(resolve(node, profiles_node.as_string()), o.home->names()).gpu_dir();
  } catch (const InputError& e) {
    profiles_node.fail(e.what());
  }
  if (auto n = node.find("network")) {
    fs::path p = resolve(node, n->as_string());
    if (is_folder(p)) p /= "all_reduce.csv";
    if (!is_regular(p)) {
      n->fail("no all_reduce.csv at '" + p.string() +
              "' (expected a Vidur profiling/network/<node> folder)");
    }
    o.all_reduce_path = p.string();
  }
  o.cache_dir =
      node.has("cache_dir") ? resolve(node, node.get_string("cache_dir")) : RfCache::default_dir();
  RfTrainOptions& t = o.train;
  t.forest.trees = static_cast<int>(node.get_positive_int("trees", t.forest.trees));
  t.forest.subsample = node.get_fraction("subsample", t.forest.subsample);
  if (t.forest.subsample <= 0) node.at("subsample").fail("subsample must be in (0, 1]");
  t.forest.seed = static_cast<std::uint64_t>(node.get_int("seed", 42));
  t.cv_folds = static_cast<int>(node.get_int("cv_folds", t.cv_folds));
  if (t.cv_folds < 0 || t.cv_folds == 1) {
    node.at("cv_folds").fail("cv_folds must be 0 (no tuning) or ≥ 2");
  }
  t.cv_trees = static_cast<int>(node.get_positive_int("cv_trees", t.cv_trees));
  t.threads = static_cast<int>(node.get_positive_int("threads", t.threads));
  if (auto d = node.find("depths")) {
    t.depth_grid.clear();
    for (const ConfigNode& item : d->items()) {
      const std::int64_t v = item.as_int();
      if (v < 1 || v > 30) item.fail("tree depth must be in 1..30");
      t.depth_grid.push_back(static_cast<int>(v));
    }
    if (t.depth_grid.empty()) d->fail("depths must list at least one depth");
  }
  o.table_max_tokens =
      static_cast<int>(node.get_positive_int("table_max_tokens", o.table_max_tokens));
  if (auto s = node.find("scale")) {
    const std::string v = s->as_string();
    if (v == "roofline") {
      o.scale = SpecScaler::Mode::kRoofline;
    } else if (v == "analytical") {
      o.scale = SpecScaler::Mode::kAnalytical;
    } else {
      s->fail("unknown scale '" + v + "' (known: analytical, roofline)");
    }
  }
  return o;
}

const RfCostModel::Prepared& RfCostModel::prepare(const ReplicaSpec& r) const {
  return cache_.get(r, [&] { return build(r); });
}

std::unique_ptr<RfCostModel::Prepared> RfCostModel::build(const ReplicaSpec& r) const {
  auto p = std::make_unique<Prepared>();
  RfSource src;
  std::tie(src.model_id, src.mlp_path) =
      RfProfileSet::open(options_.gpu_dir, options_.home->names()).require_model(*r.model);
  src.tp = r.tp;
  src.all_reduce_path = options_.all_reduce_path;
  p->loaded = load_or_train_rf(src, options_.train, RfCache(options_.cache_dir));
  p->pricer.emplace(r, AnalyticalParams::for_gpu(*r.gpu), AnalyticalTerms{});
  p->heads = RequestEdgeTable(*p->pricer);
  if (options_.kind == Kind::kScaled) {
    p->scaler.emplace(*options_.home, *r.gpu, *r.model, r.tp, options_.scale);
  }
  p->layers = r.model->num_layers;  // a step passes every pipeline stage
  const LayerShapes& s = p->pricer->shapes();
  p->hidden = s.hidden;
  p->table.resize(static_cast<std::size_t>(options_.table_max_tokens) + 1);
  for (std::size_t i = 1; i < p->table.size(); ++i) p->table[i] = p->row(static_cast<double>(i));
  // Forests of noisy profiles are not monotone in tokens; the engine's contract is that a bigger
  // batch is never cheaper, so the step table keeps a running maximum (as the analytical model
  // does). The transfer table scores the raw forests.
  for (std::size_t i = 2; i < p->table.size(); ++i) {
    if (p->table[i].total() < p->table[i - 1].total()) p->table[i] = p->table[i - 1];
  }
  return p;
}

const RfLoaded& RfCostModel::loaded(const ReplicaSpec& replica) const {
  return prepare(replica).loaded;
}

StepCost RfCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost cost;
  if (batch.empty()) return cost;
  const Prepared& p = prepare(replica);
  const LayerPricer& pr = *p.pricer;
  const std::int64_t tokens = batch.total_tokens();
  const StepLaunch launch = replica.step_launch(!batch.prefills.empty(), tokens);
  const bool graph = launch != StepLaunch::kEager;
  const auto requests = static_cast<double>(batch.num_requests());
  const Prepared::Row row = tokens < static_cast<std::int64_t>(p.table.size())
                                ? p.table[static_cast<std::size_t>(tokens)]
                                : p.row(static_cast<double>(tokens));
  const AttentionWork work = AttentionWork::of(batch, pr.shapes(), replica.kv_dtype_bytes);
  cost[CostComponent::kGemm] = p.layers * row.gemm;
  cost[CostComponent::kLight] = p.layers * row.light;
  cost[CostComponent::kCollective] =
      p.layers * row.comm + pr.stage_transfers_ns(static_cast<double>(tokens));
  cost[CostComponent::kAttention] =
      p.layers * pr.attention_ns(work, launch == StepLaunch::kFullGraph);
  cost[CostComponent::kEmbedding] =
      row.edge + p.heads.ns(pr, static_cast<std::size_t>(batch.num_requests()), graph);
  cost[CostComponent::kHost] = pr.host_ns(requests, graph);
  double total = 0;
  for (double v : cost.breakdown_ns) total += v;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  return cost;
}

}  // namespace servesim
