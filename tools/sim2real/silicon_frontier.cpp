// sim2real --silicon --frontier: whether servesim, choosing among a group's measured
// configurations by its own prices, lands on the configuration the measurements put on the
// frontier of output tokens/s per GPU against tokens/s per user.
#include "tools/sim2real/silicon_frontier.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "tools/sim2real/silicon_fit.hpp"
#include "tools/sim2real/silicon_layouts.hpp"

namespace servesim::sim2real {

FrontierPoint frontier_point(const SiliconRow& row, std::int64_t gpus, double ttft_ms,
                             double tpot_ms) {
  const bool fixed = row.collection() == SiliconCollection::kAiConfigurator;
  const double osl = static_cast<double>(row.osl);
  const double mean_out = fixed ? osl : (std::floor(0.8 * osl) + osl) / 2;
  const double request_s = (ttft_ms + (mean_out - 1) * tpot_ms) / 1000;
  FrontierPoint p;
  p.tokens_per_s_per_user = 1000 / tpot_ms;
  p.tokens_per_s_per_gpu =
      static_cast<double>(row.concurrency) * mean_out / request_s / static_cast<double>(gpus);
  return p;
}

namespace {

struct Candidate {
  const SiliconResult* result;
  FrontierPoint measured;
  FrontierPoint simulated;
};

nlohmann::json point_json(const Candidate& c) {
  return {{"id", c.result->row->id},
          {"engine", c.result->row->backend},
          {"mode", c.result->row->mode},
          {"concurrency", c.result->row->concurrency},
          {"gpus", c.result->plan.gpus},
          {"measured",
           {{"tokens_per_s_per_user", c.measured.tokens_per_s_per_user},
            {"tokens_per_s_per_gpu", c.measured.tokens_per_s_per_gpu}}},
          {"simulated",
           {{"tokens_per_s_per_user", c.simulated.tokens_per_s_per_user},
            {"tokens_per_s_per_gpu", c.simulated.tokens_per_s_per_gpu}}}};
}

}  // namespace

namespace {

// The group's measured row that stands for a planned deployment: the same layout at the nearest
// concurrency, else the nearest layout; `same` says which.
const Candidate* measured_stand_in(const std::vector<Candidate>& rows, const SiliconRow& planned,
                                   bool& same) {
  const LayoutKey key = layout_key(planned);
  const Candidate* best = nullptr;
  double best_d = 0;
  double best_c = 0;
  for (const Candidate& c : rows) {
    const double d = layout_distance(key, layout_key(*c.result->row));
    const double cd = std::abs(std::log2(static_cast<double>(c.result->row->concurrency) /
                                         static_cast<double>(planned.concurrency)));
    if (!best || d < best_d || (d == best_d && cd < best_c)) {
      best = &c;
      best_d = d;
      best_c = cd;
    }
  }
  same = best_d == 0;
  return best;
}

// The query that plans a group: its model, system, lengths, engines, formats and modes, the most
// GPUs one of its rows runs on and the highest concurrency one was measured at.
LayoutQuery group_query(const std::vector<Candidate>& rows) {
  LayoutQuery q;
  const SiliconRow& first = *rows.front().result->row;
  q.model = first.model_path;
  q.system = first.system;
  q.isl = first.isl;
  q.osl = first.osl;
  q.engines.clear();
  q.aggregated = q.disaggregated = false;
  q.max_gpus = 0;
  std::int64_t max_concurrency = 0;
  for (const Candidate& c : rows) {
    const SiliconRow& r = *c.result->row;
    if (std::find(q.engines.begin(), q.engines.end(), r.backend) == q.engines.end()) {
      q.engines.push_back(r.backend);
    }
    const bool known =
        std::any_of(q.formats.begin(), q.formats.end(), [&](const LayoutQuery::Format& f) {
          return f.precision == r.precision && f.gemm_quant == r.gemm_quant;
        });
    if (!known) q.formats.push_back({r.precision, r.gemm_quant});
    (r.mode == "agg" ? q.aggregated : q.disaggregated) = true;
    q.max_gpus = std::max(q.max_gpus, c.result->plan.gpus);
    max_concurrency = std::max(max_concurrency, r.concurrency);
  }
  // The group's own range of client concurrency: the measured frontier has no point above it.
  q.max_concurrency = max_concurrency;
  std::sort(q.engines.begin(), q.engines.end());
  return q;
}

}  // namespace

nlohmann::json silicon_frontier_json(const std::vector<SiliconResult>& results,
                                     const SiliconOptions& options, const LayoutPlanner& plan) {
  std::vector<SiliconFitSet> fit_sets;
  for (const auto& [backend, profile] : options.engines) {
    if (auto set = silicon_fit_set(profile)) fit_sets.push_back(*set);
  }
  using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t>;
  std::map<Key, std::vector<Candidate>> groups;
  for (const SiliconResult& r : results) {
    const SiliconRow& row = *r.row;
    if (!r.plan.not_run.empty() || !std::isfinite(r.ttft_ms) || !std::isfinite(r.tpot_ms)) {
      continue;
    }
    if (std::any_of(fit_sets.begin(), fit_sets.end(),
                    [&](const SiliconFitSet& f) { return f.contains(row); })) {
      continue;
    }
    if (r.plan.gpus <= 0 || r.tpot_ms <= 0 || row.tpot_ms <= 0) continue;
    const Candidate c{&r, frontier_point(row, r.plan.gpus, row.ttft_ms, row.tpot_ms),
                      frontier_point(row, r.plan.gpus, r.ttft_ms, r.tpot_ms)};
    if (!std::isfinite(c.measured.tokens_per_s_per_gpu) ||
        !std::isfinite(c.simulated.tokens_per_s_per_gpu)) {
      continue;  // a one-token output: no decode speed to place it by
    }
    // By the catalog's model, so an FP8 and an NVFP4 checkpoint of one model are choices.
    groups[{r.plan.model, row.system, row.isl, row.osl}].push_back(c);
  }
  constexpr std::size_t kMinRows = 5;
  nlohmann::json cases = nlohmann::json::array();
  std::int64_t within = 0;
  std::int64_t plan_within = 0;
  std::int64_t compared_groups = 0;
  double plan_wall_s = 0;
  std::size_t plan_runs = 0;
  for (const auto& [key, rows] : groups) {
    if (rows.size() < kMinRows) continue;
    ++compared_groups;
    const auto& [model, system, isl, osl] = key;
    std::optional<LayoutSearch> search;
    if (plan) {
      search = plan(group_query(rows));
      plan_wall_s += search->wall_s;
      plan_runs += search->runs;
    }
    for (const double bound : kFrontierBounds) {
      const Candidate* best = nullptr;
      const Candidate* pick = nullptr;
      for (const Candidate& c : rows) {
        if (c.measured.tokens_per_s_per_user >= bound &&
            (!best || c.measured.tokens_per_s_per_gpu > best->measured.tokens_per_s_per_gpu)) {
          best = &c;
        }
        if (c.simulated.tokens_per_s_per_user >= bound &&
            (!pick || c.simulated.tokens_per_s_per_gpu > pick->simulated.tokens_per_s_per_gpu)) {
          pick = &c;
        }
      }
      if (!best) continue;  // no measured configuration is that fast per user
      nlohmann::json c = {{"group", fmt::format("{} {} {}/{}", model, system, isl, osl)},
                          {"rows", rows.size()},
                          {"bound_tokens_per_s_per_user", bound},
                          {"best", point_json(*best)}};
      bool ok = false;
      if (pick) {
        const double gap =
            100 * (1 - pick->measured.tokens_per_s_per_gpu / best->measured.tokens_per_s_per_gpu);
        ok = gap <= 10 && pick->measured.tokens_per_s_per_user >= 0.9 * bound;
        c["pick"] = point_json(*pick);
        c["gap_pct"] = gap;
      } else {
        c["pick"] = nullptr;  // servesim prices no configuration this fast per user
        c["gap_pct"] = nullptr;
      }
      c["within_10pct"] = ok;
      within += ok ? 1 : 0;
      if (search) {
        nlohmann::json pj = nullptr;
        bool plan_ok = false;
        if (const LayoutResult* p = layout_pick(*search, bound, kNaN)) {
          bool same = false;
          const Candidate* m = measured_stand_in(rows, *p->run.row, same);
          const double gap =
              100 * (1 - m->measured.tokens_per_s_per_gpu / best->measured.tokens_per_s_per_gpu);
          plan_ok = gap <= 10 && m->measured.tokens_per_s_per_user >= 0.9 * bound;
          pj = {{"label", p->run.row->id},
                {"gpus", p->run.plan.gpus},
                {"simulated",
                 {{"tokens_per_s_per_user", p->point.tokens_per_s_per_user},
                  {"tokens_per_s_per_gpu", p->point.tokens_per_s_per_gpu}}},
                {"row", point_json(*m)},
                {"match", same ? "same layout" : "nearest layout"},
                {"gap_pct", gap},
                {"within_10pct", plan_ok}};
        }
        c["plan"] = pj;
        plan_within += plan_ok ? 1 : 0;
      }
      cases.push_back(std::move(c));
    }
  }
  const auto share = [&](std::int64_t n) {
    return cases.empty()
               ? nlohmann::json(nullptr)
               : nlohmann::json(static_cast<double>(n) / static_cast<double>(cases.size()));
  };
  nlohmann::json doc = {{"groups", compared_groups},
                        {"min_rows_per_group", kMinRows},
                        {"cases", cases},
                        {"share_within_10pct_among_measured", share(within)},
                        {"share_within_10pct", plan ? share(plan_within) : nullptr}};
  if (plan) {
    doc["plan_runs"] = plan_runs;
    doc["plan_wall_s"] = plan_wall_s;
  }
  return doc;
}

std::string silicon_frontier_table(const nlohmann::json& frontier) {
  const auto& cases = frontier["cases"];
  const auto groups = frontier["groups"].get<std::int64_t>();
  const bool planned = frontier.contains("plan_runs");
  std::string out = fmt::format(
      "frontier — servesim's picks against each group's measured best ({} group{} of ≥ {} rows, "
      "{} cases)\n",
      groups, groups == 1 ? "" : "s", frontier["min_rows_per_group"].get<std::int64_t>(),
      cases.size());
  if (planned) {
    out += fmt::format(
        "  plan searched {} runs in {:.0f} s; plan's pick is measured as the row of "
        "its layout (=) or the nearest layout (~)\n",
        frontier["plan_runs"].get<std::size_t>(), frontier["plan_wall_s"].get<double>());
  }
  out += fmt::format("  {:<44} {:>10}  {:>9}  {:>18}  {}\n", "group", "tok/s/user", "best/GPU",
                     "among measured", planned ? "plan's pick (✗: not within 10%)" : "");
  const auto gap_text = [](const nlohmann::json& gap, bool ok) {
    return gap.is_null() ? std::string("none")
                         : fmt::format("{:+.1f}%{}", -gap.get<double>(), ok ? "" : " ✗");
  };
  for (const auto& c : cases) {
    const auto& best = c["best"]["measured"];
    const std::string among = c["pick"].is_null()
                                  ? std::string("none")
                                  : gap_text(c["gap_pct"], c["within_10pct"].get<bool>());
    std::string plan;
    if (planned) {
      const auto& p = c["plan"];
      plan = p.is_null()
                 ? std::string("no deployment priced this fast")
                 : fmt::format("{} {} {}", gap_text(p["gap_pct"], p["within_10pct"].get<bool>()),
                               p["match"].get<std::string>() == "same layout" ? "=" : "~",
                               p["label"].get<std::string>());
    }
    out += fmt::format("  {:<44} {:>10.0f}  {:>9.1f}  {:>18}  {}\n", c["group"].get<std::string>(),
                       c["bound_tokens_per_s_per_user"].get<double>(),
                       best["tokens_per_s_per_gpu"].get<double>(), among, plan);
  }
  const auto pct = [](const nlohmann::json& share) {
    return share.is_null() ? std::string("-")
                           : fmt::format("{:.1f}% of the cases", 100 * share.get<double>());
  };
  out += fmt::format("within 10%: among measured {}",
                     pct(frontier["share_within_10pct_among_measured"]));
  if (planned) out += fmt::format("; plan's pick {}", pct(frontier["share_within_10pct"]));
  out += "\n";
  return out;
}

}  // namespace servesim::sim2real
