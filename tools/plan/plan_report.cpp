// The planner's plan.json document and the report `plan` prints (detail::Planner).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/util/sample_stats.hpp"
#include "tools/plan/planner.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::decide::detail {

nlohmann::json Planner::report() const {
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
        e["why"] = evidence->replicas == k
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

std::string Planner::text(const nlohmann::json& doc) const {
  const int seeds = std::max(o_.seeds, 1);
  std::string out =
      fmt::format("{} — the fleet of least {} that meets {} ({} seed{} a fleet; prices: {})\n",
                  base_.name, o_.objective, fmt::join(o_.slos, ", "), seeds, seeds == 1 ? "" : "s",
                  o_.objective == "cost" ? prices_->source() : "not used");
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
      out += fmt::format("  {:<{}} {:>8} {:>5} {:>10}  {} (none of 1…{} meets)\n", label(c), width,
                         "-", "-", "-", fmt::join(tried, " "), c.max_replicas);
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
    out +=
        fmt::format("pick       none: no fleet of up to {} GPUs meets every bound\n", o_.max_gpus);
    if (const Point* best = closest()) {
      out += fmt::format("  closest  {} ({}) misses {}\n", fleet(*best),
                         objective_text(best->objective), misses(*best));
    }
  }
  if (doc.contains("bands")) {
    out += doc["bands"].contains("pick") ? format_plan_bands(doc["bands"])
                                         : std::string("bands      no pick: nothing to retest\n");
  }
  out +=
      fmt::format("files      {}/ (plan.json, points.csv{})\n", dir_, o_.plots ? ", plan.png" : "");
  out += fmt::format("wall       {} fleets, {} runs in {:.2f} s\n",
                     doc["fleets_simulated"].get<std::size_t>(), doc["runs"].get<std::size_t>(),
                     wall_s_);
  return out;
}

}  // namespace servesim::decide::detail
