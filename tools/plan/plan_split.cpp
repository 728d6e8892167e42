#include "tools/plan/plan_split.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/selection.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::decide {
namespace fs = std::filesystem;
namespace {

// Metrics that are sums over the requests, not properties each pool's stream shares.
bool is_total(const std::string& metric) {
  for (const char* m : {"arrived", "finished", "rejected", "preemptions", "preempted_requests",
                        "prompt_tokens", "output_tokens", "makespan_s", "steps", "requests_per_s",
                        "output_tok_s", "prefill_tok_s", "total_tok_s", "goodput_req_s", "energy_j",
                        "rejected_by_admission", "demoted", "served_past_deadline"}) {
    if (metric == m) return true;
  }
  return false;
}

nlohmann::json read_plan(const std::string& dir) {
  std::ifstream f(fs::path(dir) / "plan.json");
  return nlohmann::json::parse(f);
}

// "2 × h100-sxm TP1"
std::string fleet_text(const nlohmann::json& p) {
  return fmt::format("{} × {}", p["replicas"].get<int>(), p["label"].get<std::string>());
}

std::string objective_text(const std::string& objective, double v) {
  if (!std::isfinite(v)) return "n/a";
  if (objective == "cost") return fmt::format("${:.2f}/h", v);
  if (objective == "power") return fmt::format("{:.0f} W", v);
  return fmt::format("{:.0f} GPUs", v);
}

// The split fleet run whole: its two groups as the pool picks, behind a length_split router.
nlohmann::json check_split(const PlanOptions& o, const RunConfig& base, int threshold,
                           const nlohmann::json& shorts, const nlohmann::json& longs,
                           const std::vector<sweep::Bound>& bounds) {
  nlohmann::json group = base.root.at("replicas").to_json();
  if (group.is_array()) group = group.at(0);
  nlohmann::json groups = nlohmann::json::array();
  for (const nlohmann::json* p : {&shorts, &longs}) {
    nlohmann::json g = group;
    g["gpu"] = (*p)["gpu"];
    g["tp"] = (*p)["tp"];
    g["count"] = (*p)["replicas"];
    groups.push_back(g);
  }
  const nlohmann::json router = {
      {"kind", "length_split"},
      {"pools",
       {{{"name", "short"}, {"groups", {0}}, {"max_prompt_tokens", threshold}},
        {{"name", "long"}, {"groups", {1}}}}}};
  std::vector<ConfigOverride> overrides;
  for (const auto& s : o.sets) overrides.push_back({"--set", s});
  overrides.push_back({"--plan", "replicas=" + groups.dump()});
  overrides.push_back({"--plan", "router=" + router.dump()});
  const int seeds = std::max(o.seeds, 1);
  std::vector<std::vector<double>> runs;
  for (int s = 0; s < seeds; ++s) {
    Simulation sim(load_run_config(o.config, overrides, base.seed + static_cast<std::uint64_t>(s)),
                   nullptr);
    RunOptions options;
    options.write_outputs = false;
    options.stop = o.stop;
    runs.push_back(sweep::flatten_summary(execute_run(sim, options)));
  }
  std::vector<double> means;
  nlohmann::json metrics = nlohmann::json::object();
  for (std::size_t m = 0; m < sweep::metric_names().size(); ++m) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(r[m]);
    means.push_back(mean_ci95(v).mean);
    metrics[sweep::metric_names()[m]] = sweep::number_or_null(means.back());
  }
  const sweep::PointTable t(sweep::metric_names(), {means});
  return {{"meets", sweep::meets(t, 0, bounds)}, {"metrics", metrics}};
}

}  // namespace

PlanReport run_split_plan(const PlanOptions& options) {
  if (!options.varies.empty()) {
    throw InputError(
        "--split with --vary: the pools could pick different settings, which one fleet config "
        "cannot hold (expected no --vary)");
  }
  if (options.bands || !options.error_model.empty()) {
    throw InputError("--split with --bands: bands are stated for one-pool plans only");
  }
  std::vector<sweep::Bound> bounds;
  for (const auto& s : options.slos) {
    const sweep::SloBound b = sweep::parse_slo(s, sweep::metric_names());
    if (is_total(b.metric)) {
      throw InputError(fmt::format(
          "--slo {}: with --split each pool is planned for its own requests, and a bound on a "
          "total ({}) of one pool says nothing of the fleet's (expected latency, attainment or "
          "per-token bounds)",
          s, b.metric));
    }
    if (b.values.size() == 1)
      bounds.push_back({*sweep::metric_index(b.metric), b.at_least, b.values[0]});
  }
  for (std::size_t i = 0; i < options.split.size(); ++i) {
    if (options.split[i] < 1) throw InputError("--split: expected thresholds ≥ 1 token");
    if (i > 0 && options.split[i] <= options.split[i - 1]) {
      throw InputError("--split: expected thresholds in increasing order");
    }
  }
  PlanOptions one = options;
  one.split.clear();
  PlanReport out = run_plan(one);
  if (!out.complete) return out;
  const RunConfig base = load_run_config(options.config, options.sets, std::nullopt);
  const nlohmann::json one_doc = read_plan(out.dir);
  nlohmann::json doc = {{"config", options.config},
                        {"slos", options.slos},
                        {"objective", options.objective},
                        {"one_pool", one_doc["pick"]},
                        {"thresholds", nlohmann::json::array()}};
  std::string text = "split      two pools by prompt length, each planned for its own requests:\n";
  nlohmann::json best;  // the cheapest threshold row that meets, or null
  double best_objective = std::numeric_limits<double>::infinity();
  for (const int t : options.split) {
    const std::string where = (fs::path(out.dir) / fmt::format("split_{}", t)).string();
    nlohmann::json row = {{"max_prompt_tokens", t}};
    for (const auto& [pool, bound] :
         {std::pair{"short", fmt::format("workload.prompt_tokens.max={}", t)},
          std::pair{"long", fmt::format("workload.prompt_tokens.min={}", t + 1)}}) {
      PlanOptions p = one;
      p.sets.push_back(bound);
      p.out_dir = (fs::path(where) / pool).string();
      p.quiet = true;
      p.plots = false;
      p.progress = nullptr;
      const PlanReport r = run_plan(p);
      if (!r.complete) {
        out.complete = false;
        out.cut += r.cut;
        return out;
      }
      row[pool] = read_plan(r.dir)["pick"];
    }
    const bool both = !row["short"].is_null() && !row["long"].is_null();
    row["objective"] = both ? nlohmann::json(row["short"]["objective"].get<double>() +
                                             row["long"]["objective"].get<double>())
                            : nlohmann::json(nullptr);
    text +=
        fmt::format("  ≤ {:>6} tokens: short {} + long {} = {}\n", t,
                    row["short"].is_null() ? std::string("none meets") : fleet_text(row["short"]),
                    row["long"].is_null() ? std::string("none meets") : fleet_text(row["long"]),
                    both ? objective_text(options.objective, row["objective"].get<double>()) : "-");
    doc["thresholds"].push_back(row);
  }
  for (const auto& row : doc["thresholds"]) {
    if (!row["objective"].is_null() && row["objective"].get<double>() < best_objective) {
      best_objective = row["objective"].get<double>();
      best = row;
    }
  }
  const double one_objective = one_doc["pick"].is_null()
                                   ? std::numeric_limits<double>::infinity()
                                   : one_doc["pick"]["objective"].get<double>();
  if (best.is_null()) {
    doc["pick"] = "one_pool";
    text += "pick       one pool: no split meets\n";
  } else {
    const int t = best["max_prompt_tokens"].get<int>();
    const nlohmann::json check = check_split(options, base, t, best["short"], best["long"], bounds);
    doc["split_check"] = check;
    doc["split_check"]["max_prompt_tokens"] = t;
    const bool split_wins = best_objective < one_objective && check["meets"].get<bool>();
    doc["pick"] = split_wins ? "split" : "one_pool";
    doc["split_pick"] = best;
    text += fmt::format(
        "check      split at {} tokens run whole behind length_split: {}\n", t,
        check["meets"].get<bool>() ? "meets every bound" : "misses a bound (see split.json)");
    text +=
        split_wins
            ? fmt::format("pick       split at {} tokens: {} against one pool's {} ({:+.1f}%)\n", t,
                          objective_text(options.objective, best_objective),
                          objective_text(options.objective, one_objective),
                          std::isfinite(one_objective) ? 100 * (best_objective / one_objective - 1)
                                                       : -100.0)
            : fmt::format("pick       one pool: {} against the best split's {}\n",
                          objective_text(options.objective, one_objective),
                          objective_text(options.objective, best_objective));
  }
  std::ofstream(fs::path(out.dir) / "split.json") << doc.dump(2) << "\n";
  if (!options.quiet) {
    out.text += text + fmt::format("files      {}/split.json, split_T/{{short,long}}/\n", out.dir);
  }
  return out;
}

}  // namespace servesim::decide
