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
#include "tools/sweep/grid.hpp"
#include "tools/sweep/parallel_items.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/selection.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::decide {
namespace fs = std::filesystem;
namespace {

// One fleet kind: a GPU at a TP degree with one setting of the --vary keys, 1 … max_replicas
// replicas of it.
struct Candidate {
  const GpuSpec* gpu = nullptr;
  int tp = 1;
  std::size_t setting = 0;  // grid point of the --vary keys
  int max_replicas = 0;
  std::string cannot;  // why it cannot be built at all ("" = it can)
};

// One fleet simulated: `replicas` replicas of a candidate.
struct Point {
  std::size_t candidate = 0;
  int replicas = 0;
  std::vector<double> means;  // over the seeds, per metric_names()
  bool meets = false;
  double objective = 0;
  double usd_per_hour = kNaN;
  int gpus = 0;
  double power_w = 0;
};

class Planner {
 public:
  explicit Planner(const PlanOptions& o)
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
      errors_ =
          ErrorModel::load(o.error_model.empty() ? ErrorModel::default_path() : o.error_model);
    }
    dir_ = o.out_dir.empty() ? (fs::path("out") / base_.name / "plan").string() : o.out_dir;
  }

  PlanReport run() {
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
    for (const char* f : {"plan.json", "points.csv", "plan.png"})
      fs::remove(fs::path(dir_) / f, ec);
    std::ofstream(fs::path(dir_) / "plan.json") << doc.dump(2) << "\n";
    write_points_csv();
    PlanReport out;
    out.dir = dir_;
    if (!o_.quiet) out.text = text(doc);
    out.complete = cut_ == 0;
    out.cut = cut_;
    return out;
  }

 private:
  std::vector<std::string> catalog_dirs() const {
    std::vector<std::string> dirs = base_.catalog_dirs;
    for (const auto& d : Catalog::default_dirs()) dirs.push_back(d);
    return dirs;
  }

  std::vector<ConfigOverride> overrides(const Candidate& c, int replicas) const {
    std::vector<ConfigOverride> out;
    for (const auto& s : o_.sets) out.push_back({"--set", s});
    for (const auto& s : grid_.assignments(c.setting)) out.push_back({"--vary", s});
    out.push_back({"--plan", group_prefix_ + "gpu=" + c.gpu->name});
    out.push_back({"--plan", fmt::format("{}tp={}", group_prefix_, c.tp)});
    out.push_back({"--plan", fmt::format("{}count={}", group_prefix_, replicas)});
    return out;
  }

  Point evaluate(std::size_t ci, int replicas, Progress& progress) {
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

  // The least replica count of candidate `ci` that meets: doubling from 1, then bisection
  // between the last count that fails and the first that meets (or every count, exhaustive).
  void search(std::size_t ci, Progress& progress) {
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

  const Point* least_meeting(std::size_t ci) const {
    for (const Point& p : points_[ci]) {
      if (p.meets) return &p;
    }
    return nullptr;
  }

  // "h200 TP2" or, with --vary keys, "h200 TP2 (scheduler.chunk_size=512)".
  std::string label(const Candidate& c) const {
    const std::string base = fmt::format("{} TP{}", c.gpu->name, c.tp);
    return grid_.axes().empty() ? base : fmt::format("{} ({})", base, grid_.describe(c.setting));
  }

  std::string fleet(const Point& p) const {
    return fmt::format("{} × {}", p.replicas, label(candidates_[p.candidate]));
  }

  std::string objective_text(double v) const {
    if (!std::isfinite(v)) return "n/a";
    if (o_.objective == "cost") return fmt::format("${:.2f}/h", v);
    if (o_.objective == "power") return fmt::format("{:.0f} W", v);
    return fmt::format("{:.0f} GPU{}", v, v == 1 ? "" : "s");
  }

  // What a failing fleet misses: each broken bound with its value.
  std::string misses(const Point& p) const {
    std::vector<std::string> parts;
    const sweep::PointTable t(sweep::metric_names(), {p.means});
    for (const auto& b : bounds_) {
      if (sweep::meets(t, 0, {b})) continue;
      parts.push_back(fmt::format("{} {:.4g} {} {:g}", sweep::metric_names()[b.column],
                                  p.means[b.column], b.at_least ? "<" : ">", b.value));
    }
    return parts.empty() ? std::string("meets") : fmt::format("{}", fmt::join(parts, ", "));
  }

  // The worst slack over the bounds (< 0: broken by that fraction).
  double worst_slack(const Point& p) const {
    const sweep::PointTable t(sweep::metric_names(), {p.means});
    double worst = std::numeric_limits<double>::infinity();
    for (const auto& b : bounds_) worst = std::min(worst, sweep::slack(t, 0, b));
    return worst;
  }

  nlohmann::json setting_json(const Candidate& c) const {
    nlohmann::json s = nlohmann::json::object();
    const auto values = grid_.values(c.setting);
    for (std::size_t a = 0; a < grid_.axes().size(); ++a) {
      s[grid_.axes()[a].key] = sweep::value_json(values[a]);
    }
    return s;
  }

  nlohmann::json point_json(const Point& p) const {
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

  // Every simulated fleet, in candidate then replica order.
  std::vector<const Point*> all_points() const {
    std::vector<const Point*> out;
    for (const auto& pts : points_) {
      for (const Point& p : pts) out.push_back(&p);
    }
    return out;
  }

  // The fleets no other fleet beats on both the objective and the first bound's metric (the
  // cost-vs-SLO frontier), by increasing objective.
  std::vector<const Point*> frontier() const {
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

  // The least-objective fleet that meets; ties go to fewer GPUs, then to the earlier candidate.
  const Point* pick() const {
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

  // The fleet that comes nearest to meeting (least negative worst slack).
  const Point* closest() const {
    const Point* best = nullptr;
    for (const Point* p : all_points()) {
      if (!best || worst_slack(*p) > worst_slack(*best)) best = p;
    }
    return best;
  }

  nlohmann::json report() const {
    nlohmann::json doc;
    doc["config"] = o_.config;
    doc["name"] = base_.name;
    doc["slos"] = o_.slos;
    doc["objective"] = o_.objective;
    doc["prices"] = prices_->source();
    doc["seeds"] = std::max(o_.seeds, 1);
    doc["max_gpus"] = o_.max_gpus;
    doc["varied"] = nlohmann::json::array();
    for (const auto& a : grid_.axes()) doc["varied"].push_back(a.key);
    doc["search"] = o_.exhaustive ? "exhaustive" : "monotone (doubling, then bisection)";
    doc["candidates"] = nlohmann::json::array();
    const Point* pick = this->pick();
    for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
      const Candidate& c = candidates_[ci];
      nlohmann::json cj = {{"gpu", c.gpu->name},
                           {"tp", c.tp},
                           {"setting", setting_json(c)},
                           {"label", label(c)},
                           {"max_replicas", c.max_replicas}};
      if (!c.cannot.empty()) cj["cannot_run"] = c.cannot;
      cj["points"] = nlohmann::json::array();
      bool met = false, monotone = true;
      for (const Point& p : points_[ci]) {
        cj["points"].push_back(point_json(p));
        if (met && !p.meets) monotone = false;
        met = met || p.meets;
      }
      if (o_.exhaustive) cj["monotone"] = monotone;
      const Point* least = least_meeting(ci);
      cj["least_meeting"] = least ? nlohmann::json(least->replicas) : nlohmann::json(nullptr);
      doc["candidates"].push_back(cj);
    }
    const auto pts = all_points();
    doc["fleets_simulated"] = pts.size();
    doc["runs"] = pts.size() * static_cast<std::size_t>(std::max(o_.seeds, 1));
    doc["pick"] = pick ? point_json(*pick) : nlohmann::json(nullptr);
    doc["frontier"] = nlohmann::json::array();
    for (const Point* p : frontier()) doc["frontier"].push_back(point_json(*p));
    // Why each cheaper option fails. Per candidate the objective grows in proportion to the
    // replica count; the counts cheaper than the pick are 1 … k, and the smallest count ≥ k
    // that was simulated and misses shows (by monotonicity in the count) that all of them miss.
    doc["alternatives"] = nlohmann::json::array();
    for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
      const Candidate& c = candidates_[ci];
      // kind: "cheaper" (fails), "dearer" (meets at a higher objective), "cannot run".
      nlohmann::json e = {{"label", label(c)}, {"kind", "dearer"}};
      const Point* least = least_meeting(ci);
      if (!c.cannot.empty()) {
        e["kind"] = "cannot run";
        e["why"] = fmt::format("{}: {}", label(c), c.cannot);
      } else if (pick && least == pick) {
        if (pick->replicas == 1) continue;
        const Point* evidence = nullptr;
        for (const Point& p : points_[ci]) {
          if (p.replicas == pick->replicas - 1) evidence = &p;
        }
        if (!evidence) continue;  // exhaustive with a non-monotone count below: shown per count
        e["kind"] = "cheaper";
        e["fails_at"] = point_json(*evidence);
        e["why"] = fmt::format("{} ({}) misses {}", fleet(*evidence),
                               objective_text(evidence->objective), misses(*evidence));
      } else if (points_[ci].empty()) {
        continue;
      } else {
        const double unit = points_[ci].front().objective / points_[ci].front().replicas;
        int k = 0;  // the most replicas cheaper than the pick
        while (k < c.max_replicas && (!pick || (k + 1) * unit < pick->objective)) ++k;
        const Point* evidence = nullptr;
        for (const Point& p : points_[ci]) {
          if (!p.meets && p.replicas >= k && !evidence) evidence = &p;
        }
        if (k > 0 && evidence) {
          e["kind"] = "cheaper";
          e["fails_at"] = point_json(*evidence);
          e["why"] =
              evidence->replicas == k
                  ? fmt::format("{} ({}) misses {}", fleet(*evidence),
                                objective_text(evidence->objective), misses(*evidence))
                  : fmt::format("{} ({}) and fewer miss, as {} does: {}",
                                fmt::format("{} × {}", k, label(c)), objective_text(k * unit),
                                fleet(*evidence), misses(*evidence));
        } else if (least) {
          e["why"] =
              fmt::format("{} meets but costs {}", fleet(*least), objective_text(least->objective));
        } else {
          continue;
        }
      }
      doc["alternatives"].push_back(e);
    }
    if (!pick) {
      const Point* near = closest();
      doc["closest"] = near ? point_json(*near) : nlohmann::json(nullptr);
    }
    doc["wall_s"] = wall_s_;
    return doc;
  }

  std::string text(const nlohmann::json& doc) const {
    const int seeds = std::max(o_.seeds, 1);
    std::string out =
        fmt::format("{} — the fleet of least {} that meets {} ({} seed{} a fleet; prices: {})\n",
                    base_.name, o_.objective, fmt::join(o_.slos, ", "), seeds,
                    seeds == 1 ? "" : "s", o_.objective == "cost" ? prices_->source() : "not used");
    std::size_t width = 10;
    for (const Candidate& c : candidates_) width = std::max(width, label(c).size());
    out += fmt::format("  {:<{}} {:>8} {:>5} {:>10}  {}\n", "candidate", width, "replicas", "GPUs",
                       o_.objective, "counts simulated (✓ meets, ✗ misses)");
    for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
      const Candidate& c = candidates_[ci];
      if (!c.cannot.empty()) {
        out += fmt::format("  {:<{}} cannot run: {}\n", label(c), width, c.cannot);
        continue;
      }
      std::vector<std::string> tried;
      for (const Point& p : points_[ci]) {
        tried.push_back(fmt::format("{}{}", p.replicas, p.meets ? "✓" : "✗"));
      }
      const Point* least = least_meeting(ci);
      if (least) {
        out += fmt::format("  {:<{}} {:>8} {:>5} {:>10}  {}\n", label(c), width, least->replicas,
                           least->gpus, objective_text(least->objective), fmt::join(tried, " "));
      } else {
        out += fmt::format("  {:<{}} {:>8} {:>5} {:>10}  {} (none of 1…{} meets)\n", label(c),
                           width, "-", "-", "-", fmt::join(tried, " "), c.max_replicas);
      }
    }
    if (o_.exhaustive) {
      std::vector<std::string> not_monotone;
      for (const auto& cj : doc["candidates"]) {
        if (cj.contains("monotone") && !cj["monotone"].get<bool>()) {
          not_monotone.push_back(cj["label"].get<std::string>());
        }
      }
      out += not_monotone.empty()
                 ? std::string("monotone   yes: no count misses once a smaller one meets\n")
                 : fmt::format("monotone   no for {}: the default search could pick otherwise\n",
                               fmt::join(not_monotone, ", "));
    }
    if (const Point* pick = this->pick()) {
      const auto& p = doc["pick"];
      out += o_.objective == "gpus"
                 ? fmt::format("pick       {}: {}", fleet(*pick), objective_text(pick->objective))
                 : fmt::format("pick       {}: {} GPUs, {}", fleet(*pick), pick->gpus,
                               objective_text(pick->objective));
      if (!p["usd_per_million_output_tokens"].is_null()) {
        out += fmt::format(", ${:.3f} per million output tokens",
                           p["usd_per_million_output_tokens"].get<double>());
      }
      out += "\n";
      // The nearest alternatives first: cheaper ones by decreasing cost, then the rest.
      std::vector<const nlohmann::json*> alts;
      for (const auto& e : doc["alternatives"]) alts.push_back(&e);
      const auto cheaper = [](const nlohmann::json& e) { return e["kind"] == "cheaper"; };
      const auto cost_of = [](const nlohmann::json& e) {
        return e.contains("fails_at") && e["fails_at"]["objective"].is_number()
                   ? e["fails_at"]["objective"].get<double>()
                   : 0.0;
      };
      std::stable_sort(alts.begin(), alts.end(),
                       [&](const nlohmann::json* a, const nlohmann::json* b) {
                         const bool ca = cheaper(*a), cb = cheaper(*b);
                         return ca != cb ? ca : ca && cost_of(*a) > cost_of(*b);
                       });
      constexpr std::size_t kShown = 12;
      for (std::size_t i = 0; i < std::min(alts.size(), kShown); ++i) {
        out += fmt::format("  {:<8} {}\n", (*alts[i])["kind"].get<std::string>(),
                           (*alts[i])["why"].get<std::string>());
      }
      if (alts.size() > kShown) {
        out += fmt::format("  ({} more alternatives in plan.json)\n", alts.size() - kShown);
      }
    } else {
      out += fmt::format("pick       none: no fleet of up to {} GPUs meets every bound\n",
                         o_.max_gpus);
      if (const Point* best = closest()) {
        out += fmt::format("  closest  {} ({}) misses {}\n", fleet(*best),
                           objective_text(best->objective), misses(*best));
      }
    }
    if (doc.contains("bands")) {
      out += doc["bands"].contains("pick") ? format_plan_bands(doc["bands"])
                                           : std::string("bands      no pick: nothing to retest\n");
    }
    out += fmt::format("files      {}/ (plan.json, points.csv{})\n", dir_,
                       o_.plots ? ", plan.png" : "");
    out += fmt::format("wall       {} fleets, {} runs in {:.2f} s\n",
                       doc["fleets_simulated"].get<std::size_t>(), doc["runs"].get<std::size_t>(),
                       wall_s_);
    return out;
  }

  // The most replicas of candidate `ci` whose objective is below the pick's (0: none).
  int cheaper_count(std::size_t ci, const Point& pick) const {
    if (ci == pick.candidate) return pick.replicas - 1;
    const double unit = points_[ci].front().objective / points_[ci].front().replicas;
    int k = 0;
    while (k < candidates_[ci].max_replicas && (k + 1) * unit < pick.objective) ++k;
    return k;
  }

  BandFleet band_fleet(std::size_t ci, int replicas) const {
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

  // plan.json "bands" (--bands): the pick and, per candidate, its most replicas cheaper than the
  // pick, each rerun under the error model's draws (tools/plan/plan_bands.hpp).
  nlohmann::json bands(int threads) {
    const Point* pick = this->pick();
    if (!pick) return {{"status", "no pick"}, {"error_model", errors_->file()}};
    PlanBandsRequest r;
    r.pick = band_fleet(pick->candidate, pick->replicas);
    for (std::size_t ci = 0; ci < candidates_.size(); ++ci) {
      if (!candidates_[ci].cannot.empty() || points_[ci].empty()) continue;
      const int k = cheaper_count(ci, *pick);
      if (k > 0) r.cheaper.push_back(band_fleet(ci, k));
    }
    std::stable_sort(
        r.cheaper.begin(), r.cheaper.end(),
        [](const BandFleet& a, const BandFleet& b) { return a.objective > b.objective; });
    r.seeds = std::max(o_.seeds, 1);
    r.model = &*errors_;
    r.draws = o_.band_draws;
    r.bounds = bounds_;
    r.cache = &cache_;
    r.stop = o_.stop;
    r.threads = threads;
    return plan_bands(r);
  }

  void write_points_csv() const {
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
      f << fmt::format(",{},{},{},{},{},{}", p->replicas, p->gpus,
                       sweep::csv_number(p->usd_per_hour), sweep::csv_number(p->power_w),
                       sweep::csv_number(p->objective), p->meets ? 1 : 0);
      for (const double v : p->means) f << "," << sweep::csv_number(v);
      f << "\n";
    }
  }

  const PlanOptions& o_;
  RunConfig base_;
  sweep::Grid grid_;
  std::vector<sweep::Bound> bounds_;
  std::string group_prefix_;
  std::shared_ptr<Catalog> catalog_;
  std::unique_ptr<Prices> prices_;
  std::vector<Candidate> candidates_;
  std::vector<std::vector<Point>> points_;  // per candidate, by replica count
  RunCache cache_;
  std::optional<ErrorModel> errors_;  // --bands
  std::atomic<std::size_t> cut_{0};   // runs skipped or stopped by PlanOptions::stop
  std::string dir_;
  double wall_s_ = 0;
};

}  // namespace

PlanReport run_plan(const PlanOptions& options) {
  if (!options.split.empty()) return run_split_plan(options);
  Planner planner(options);
  return planner.run();
}

}  // namespace servesim::decide
