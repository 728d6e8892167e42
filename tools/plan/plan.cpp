#include "tools/plan/plan.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include "run/bands.hpp"
#include "run/error_model.hpp"
#include "run/prices.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/common/progress.hpp"
#include "tools/plan/plan_bands.hpp"
#include "tools/plan/plan_split.hpp"
#include "tools/plan/planner.hpp"
#include "tools/sweep/grid.hpp"
#include "tools/sweep/parallel_items.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/selection.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::decide {
namespace fs = std::filesystem;
namespace detail {

Planner::Planner(const PlanOptions& o)
    : o_(o),
      base_(load_run_config(o.config, o.sets, std::nullopt)),
      grid_(o.varies, false, 1, base_.seed) {
  if (o.gpus.empty()) throw InputError("--gpus: expected the GPU kinds to plan with");
  if (o.slos.empty()) throw InputError("--slo: expected at least one bound to meet");
  if (o.objective != "cost" && o.objective != "gpus" && o.objective != "power") {
    throw InputError(fmt::format("--objective {}: expected cost, gpus or power", o.objective));
  }
  for (const auto& s : o.slos) {
    const sweep::SloBound b = sweep::parse_slo(s, sweep::metric_names());
    if (b.values.size() != 1) {
      throw InputError(fmt::format("--slo {}: plan takes one value per bound", s));
    }
    bounds_.push_back({*sweep::metric_index(b.metric), b.at_least, b.values[0]});
  }
  if (base_.replicas.size() != 1) {
    throw InputError(fmt::format(
        "{}: plan replaces the config's replica group with each fleet it tries (expected one "
        "group, found {})",
        o.config, base_.replicas.size()));
  }
  group_prefix_ = base_.root.at("replicas").is_sequence() ? "replicas.0." : "replicas.";
  // The candidates: every GPU at every TP degree that fits --max-gpus.
  catalog_ = std::make_shared<Catalog>(catalog_dirs());
  const std::string prices_file =
      o.prices.empty() ? (fs::path(catalog_dirs().back()) / "prices" / "on-demand.yaml").string()
      : o.prices == "none" ? std::string()
                           : o.prices;
  prices_ = std::make_unique<Prices>(prices_file, o.price_overrides, *catalog_);
  for (std::size_t i = 0; i < o.tps.size(); ++i) {
    if (std::count(o.tps.begin(), o.tps.begin() + static_cast<std::ptrdiff_t>(i), o.tps[i])) {
      throw InputError(fmt::format("--tp: {} is named twice", o.tps[i]));
    }
  }
  std::vector<const GpuSpec*> seen;
  for (const std::string& name : o.gpus) {
    const GpuSpec& g = catalog_->gpu(name, ConfigNode::flag("--gpus"));
    if (std::find(seen.begin(), seen.end(), &g) != seen.end()) {
      throw InputError(fmt::format("--gpus: {} is named twice", g.name));
    }
    seen.push_back(&g);
    if (o.objective == "cost" && !prices_->has(g.name)) {
      throw InputError(fmt::format(
          "--gpus {}: no price for {} in {} (expected --price {}=USD_PER_HOUR or a price "
          "file that lists it)",
          name, g.name, prices_->source(), g.name));
    }
    for (const int tp : o.tps) {
      if (tp > o.max_gpus) continue;
      for (std::size_t s = 0; s < grid_.size(); ++s) {
        candidates_.push_back({&g, tp, s, o.max_gpus / tp, ""});
      }
    }
  }
  if (candidates_.empty()) throw InputError("--tp/--max-gpus: no fleet fits --max-gpus");
  if (o.bands || !o.error_model.empty()) {
    if (o.band_draws < kMinBandDraws || o.band_draws > kMaxBandDraws) {
      throw InputError(fmt::format("--band-draws {}: expected {} to {}", o.band_draws,
                                   kMinBandDraws, kMaxBandDraws));
    }
    errors_ = ErrorModel::load(o.error_model.empty() ? ErrorModel::default_path() : o.error_model);
  }
  dir_ = o.out_dir.empty() ? (fs::path("out") / base_.name / "plan").string() : o.out_dir;
}

PlanReport Planner::run() {
  const int threads = o_.threads > 0 ? o_.threads : tbb::info::default_concurrency();
  Progress progress(o_.progress, 0);
  points_.assign(candidates_.size(), {});
  const auto start = std::chrono::steady_clock::now();
  sweep::parallel_items(candidates_.size(), threads, [&](std::size_t c) { search(c, progress); });
  progress.finish();
  // The config's own group is only a template; but an error no fleet escapes is the config's.
  if (std::all_of(candidates_.begin(), candidates_.end(),
                  [](const Candidate& c) { return !c.cannot.empty(); })) {
    throw InputError(candidates_.front().cannot);
  }
  wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json doc = report();
  if (cut_ > 0) doc["complete"] = false;  // searched with the runs done before a stop
  if (errors_) doc["bands"] = bands(threads);
  make_output_folder(dir_, "--out");
  std::error_code ec;
  for (const char* f : {"plan.json", "points.csv", "plan.png"}) fs::remove(fs::path(dir_) / f, ec);
  std::ofstream(fs::path(dir_) / "plan.json") << doc.dump(2) << "\n";
  write_points_csv();
  PlanReport out;
  out.dir = dir_;
  if (!o_.quiet) out.text = text(doc);
  out.complete = cut_ == 0;
  out.cut = cut_;
  return out;
}

std::vector<std::string> Planner::catalog_dirs() const {
  std::vector<std::string> dirs = base_.catalog_dirs;
  for (const auto& d : Catalog::default_dirs()) dirs.push_back(d);
  return dirs;
}

std::vector<ConfigOverride> Planner::overrides(const Candidate& c, int replicas) const {
  std::vector<ConfigOverride> out;
  for (const auto& s : o_.sets) out.push_back({"--set", s});
  for (const auto& s : grid_.assignments(c.setting)) out.push_back({"--vary", s});
  out.push_back({"--plan", group_prefix_ + "gpu=" + c.gpu->name});
  out.push_back({"--plan", fmt::format("{}tp={}", group_prefix_, c.tp)});
  out.push_back({"--plan", fmt::format("{}count={}", group_prefix_, replicas)});
  return out;
}

Point Planner::evaluate(std::size_t ci, int replicas, Progress& progress) {
  const Candidate& c = candidates_[ci];
  const int seeds = std::max(o_.seeds, 1);
  std::vector<std::vector<double>> runs(static_cast<std::size_t>(seeds));
  double cap_w = 0;
  tbb::parallel_for(0, seeds, [&](int s) {
    const RunConfig cfg = load_run_config(o_.config, overrides(c, replicas),
                                          base_.seed + static_cast<std::uint64_t>(s));
    if (s == 0) cap_w = cfg.replicas[0].power_cap_w;
    auto& metrics = runs[static_cast<std::size_t>(s)];
    if (o_.stop != nullptr && o_.stop->load()) {
      ++cut_;
      metrics.assign(sweep::metric_names().size(), std::numeric_limits<double>::quiet_NaN());
      progress.done_one();
      return;
    }
    Simulation sim(cfg, &cache_);
    RunOptions options;
    options.write_outputs = false;
    options.cache = &cache_;
    options.stop = o_.stop;
    const nlohmann::json summary = execute_run(sim, options);
    if (summary["complete"].get<bool>()) {
      metrics = sweep::flatten_summary(summary);
    } else {
      ++cut_;
      metrics.assign(sweep::metric_names().size(), std::numeric_limits<double>::quiet_NaN());
    }
    progress.done_one();
  });
  Point p;
  p.candidate = ci;
  p.replicas = replicas;
  for (std::size_t m = 0; m < sweep::metric_names().size(); ++m) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const auto& r : runs) v.push_back(r[m]);
    p.means.push_back(mean_ci95(v).mean);
  }
  const sweep::PointTable t(sweep::metric_names(), {p.means});
  p.meets = sweep::meets(t, 0, bounds_);
  p.gpus = replicas * c.tp;
  // Provisioned power: every GPU at its cap (its TDP when uncapped).
  p.power_w = p.gpus * (cap_w > 0 ? cap_w : c.gpu->tdp_w);
  if (prices_->has(c.gpu->name)) {
    p.usd_per_hour = p.gpus * prices_->usd_per_gpu_hour(c.gpu->name);
  }
  // Each objective grows with the replica count, so a candidate's least count that meets is
  // its best fleet.
  p.objective = o_.objective == "cost"   ? p.usd_per_hour
                : o_.objective == "gpus" ? static_cast<double>(p.gpus)
                                         : p.power_w;
  return p;
}

void Planner::search(std::size_t ci, Progress& progress) {
  Candidate& c = candidates_[ci];
  try {
    (void)build_run(load_run_config(o_.config, overrides(c, 1), base_.seed), &cache_);
  } catch (const InputError& e) {
    c.cannot = e.what();
    return;
  }
  std::vector<Point>& pts = points_[ci];
  const auto at = [&](int n) -> const Point& {
    for (const Point& p : pts) {
      if (p.replicas == n) return p;
    }
    pts.push_back(evaluate(ci, n, progress));
    return pts.back();
  };
  if (o_.exhaustive) {
    for (int n = 1; n <= c.max_replicas; ++n) (void)at(n);
  } else {
    int lo = 0, hi = 0;  // lo fails (0: none tried), hi meets (0: none found)
    for (int n = 1;; n = std::min(2 * n, c.max_replicas)) {
      if (at(n).meets) {
        hi = n;
        break;
      }
      lo = n;
      if (n == c.max_replicas) break;
    }
    while (hi > 0 && hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (at(mid).meets ? hi : lo) = mid;
    }
  }
  std::sort(pts.begin(), pts.end(),
            [](const Point& a, const Point& b) { return a.replicas < b.replicas; });
}

const Point* Planner::least_meeting(std::size_t ci) const {
  for (const Point& p : points_[ci]) {
    if (p.meets) return &p;
  }
  return nullptr;
}

std::string Planner::label(const Candidate& c) const {
  const std::string base = fmt::format("{} TP{}", c.gpu->name, c.tp);
  return grid_.axes().empty() ? base : fmt::format("{} ({})", base, grid_.describe(c.setting));
}

std::string Planner::fleet(const Point& p) const {
  return fmt::format("{} × {}", p.replicas, label(candidates_[p.candidate]));
}

std::string Planner::objective_text(double v) const {
  if (!std::isfinite(v)) return "n/a";
  if (o_.objective == "cost") return fmt::format("${:.2f}/h", v);
  if (o_.objective == "power") return fmt::format("{:.0f} W", v);
  return fmt::format("{:.0f} GPU{}", v, v == 1 ? "" : "s");
}

std::string Planner::misses(const Point& p) const {
  std::vector<std::string> parts;
  const sweep::PointTable t(sweep::metric_names(), {p.means});
  for (const auto& b : bounds_) {
    if (sweep::meets(t, 0, {b})) continue;
    parts.push_back(fmt::format("{} {:.4g} {} {:g}", sweep::metric_names()[b.column],
                                p.means[b.column], b.at_least ? "<" : ">", b.value));
  }
  return parts.empty() ? std::string("meets") : fmt::format("{}", fmt::join(parts, ", "));
}

double Planner::worst_slack(const Point& p) const {
  const sweep::PointTable t(sweep::metric_names(), {p.means});
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& b : bounds_) worst = std::min(worst, sweep::slack(t, 0, b));
  return worst;
}

nlohmann::json Planner::setting_json(const Candidate& c) const {
  nlohmann::json s = nlohmann::json::object();
  const auto values = grid_.values(c.setting);
  for (std::size_t a = 0; a < grid_.axes().size(); ++a) {
    s[grid_.axes()[a].key] = sweep::value_json(values[a]);
  }
  return s;
}

nlohmann::json Planner::point_json(const Point& p) const {
  const Candidate& c = candidates_[p.candidate];
  nlohmann::json m = nlohmann::json::object();
  for (std::size_t i = 0; i < sweep::metric_names().size(); ++i) {
    m[sweep::metric_names()[i]] = sweep::number_or_null(p.means[i]);
  }
  const double tok_s = p.means[*sweep::metric_index("output_tok_s")];
  return {{"label", label(c)},
          {"gpu", c.gpu->name},
          {"tp", c.tp},
          {"setting", setting_json(c)},
          {"replicas", p.replicas},
          {"gpus", p.gpus},
          {"usd_per_hour", sweep::number_or_null(p.usd_per_hour)},
          {"usd_per_million_output_tokens",
           sweep::number_or_null(p.usd_per_hour / (tok_s * 3600) * 1e6)},
          {"power_w", p.power_w},
          {"objective", sweep::number_or_null(p.objective)},
          {"meets", p.meets},
          {"misses", p.meets ? nlohmann::json(nullptr) : nlohmann::json(misses(p))},
          {"metrics", m}};
}

std::vector<const Point*> Planner::all_points() const {
  std::vector<const Point*> out;
  for (const auto& pts : points_) {
    for (const Point& p : pts) out.push_back(&p);
  }
  return out;
}

std::vector<const Point*> Planner::frontier() const {
  std::vector<const Point*> pts = all_points();
  const sweep::Bound& b = bounds_.front();
  const auto better = [&](double x, double y) { return b.at_least ? x > y : x < y; };
  std::stable_sort(pts.begin(), pts.end(), [&](const Point* x, const Point* y) {
    return x->objective < y->objective ||
           (x->objective == y->objective && better(x->means[b.column], y->means[b.column]));
  });
  std::vector<const Point*> out;
  for (const Point* p : pts) {
    const double v = p->means[b.column];
    if (!std::isfinite(p->objective) || std::isnan(v)) continue;
    if (out.empty() || better(v, out.back()->means[b.column])) out.push_back(p);
  }
  return out;
}

const Point* Planner::pick() const {
  const Point* best = nullptr;
  for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
    const Point* least = least_meeting(ci);
    if (least && (!best || least->objective < best->objective ||
                  (least->objective == best->objective && least->gpus < best->gpus))) {
      best = least;
    }
  }
  return best;
}

const Point* Planner::closest() const {
  const Point* best = nullptr;
  for (const Point* p : all_points()) {
    if (!best || worst_slack(*p) > worst_slack(*best)) best = p;
  }
  return best;
}

int Planner::cheaper_count(std::size_t ci, const Point& pick) const {
  if (ci == pick.candidate) return pick.replicas - 1;
  const double unit = points_[ci].front().objective / points_[ci].front().replicas;
  int k = 0;
  while (k < candidates_[ci].max_replicas && (k + 1) * unit < pick.objective) ++k;
  return k;
}

BandFleet Planner::band_fleet(std::size_t ci, int replicas) const {
  const Candidate& c = candidates_[ci];
  BandFleet f;
  f.fleet = fmt::format("{} × {}", replicas, label(c));
  f.gpu = c.gpu->name;
  f.tp = c.tp;
  f.replicas = replicas;
  f.objective = points_[ci].front().objective / points_[ci].front().replicas * replicas;
  f.config = [this, ci, replicas](int s) {
    return load_run_config(o_.config, overrides(candidates_[ci], replicas),
                           base_.seed + static_cast<std::uint64_t>(s));
  };
  return f;
}

nlohmann::json Planner::bands(int threads) {
  const Point* pick = this->pick();
  if (!pick) return {{"status", "no pick"}, {"error_model", errors_->file()}};
  PlanBandsRequest r;
  r.pick = band_fleet(pick->candidate, pick->replicas);
  for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
    if (!candidates_[ci].cannot.empty() || points_[ci].empty()) continue;
    const int k = cheaper_count(ci, *pick);
    if (k > 0) r.cheaper.push_back(band_fleet(ci, k));
  }
  std::stable_sort(r.cheaper.begin(), r.cheaper.end(), [](const BandFleet& a, const BandFleet& b) {
    return a.objective > b.objective;
  });
  r.seeds = std::max(o_.seeds, 1);
  r.model = &*errors_;
  r.draws = o_.band_draws;
  r.bounds = bounds_;
  r.cache = &cache_;
  r.stop = o_.stop;
  r.threads = threads;
  return plan_bands(r);
}

void Planner::write_points_csv() const {
  std::ofstream f(fs::path(dir_) / "points.csv");
  f << "gpu,tp";
  for (const auto& a : grid_.axes()) f << "," << sweep::csv_text(a.key);
  f << ",replicas,gpus,usd_per_hour,power_w,objective,meets";
  for (const auto& m : sweep::metric_names()) f << "," << m;
  f << "\n";
  for (const Point* p : all_points()) {
    const Candidate& c = candidates_[p->candidate];
    f << c.gpu->name << "," << c.tp;
    for (const auto& v : grid_.values(c.setting)) f << "," << sweep::csv_text(v);
    f << fmt::format(",{},{},{},{},{},{}", p->replicas, p->gpus, sweep::csv_number(p->usd_per_hour),
                     sweep::csv_number(p->power_w), sweep::csv_number(p->objective),
                     p->meets ? 1 : 0);
    for (const double v : p->means) f << "," << sweep::csv_number(v);
    f << "\n";
  }
}

}  // namespace detail

PlanReport run_plan(const PlanOptions& options) {
  if (!options.split.empty()) return run_split_plan(options);
  detail::Planner planner(options);
  return planner.run();
}

}  // namespace servesim::decide
