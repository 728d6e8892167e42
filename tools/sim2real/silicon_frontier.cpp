// sim2real --silicon --frontier: whether servesim, choosing among a group's measured
// configurations by its own prices, lands on the configuration the measurements put on the
// frontier of output tokens/s per GPU against tokens/s per user.
#include "tools/sim2real/silicon_frontier.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "tools/sim2real/silicon_fit.hpp"

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

nlohmann::json silicon_frontier_json(const std::vector<SiliconResult>& results,
                                     const SiliconOptions& options) {
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
  std::int64_t compared_groups = 0;
  for (const auto& [key, rows] : groups) {
    if (rows.size() < kMinRows) continue;
    ++compared_groups;
    const auto& [model, system, isl, osl] = key;
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
      cases.push_back(std::move(c));
    }
  }
  return {{"groups", compared_groups},
          {"min_rows_per_group", kMinRows},
          {"cases", cases},
          {"share_within_10pct",
           cases.empty()
               ? nlohmann::json(nullptr)
               : nlohmann::json(static_cast<double>(within) / static_cast<double>(cases.size()))}};
}

std::string silicon_frontier_table(const nlohmann::json& frontier) {
  const auto& cases = frontier["cases"];
  const auto groups = frontier["groups"].get<std::int64_t>();
  std::string out = fmt::format(
      "frontier — servesim's pick among each group's measured configurations ({} group{} of ≥ {} "
      "rows, {} cases)\n",
      groups, groups == 1 ? "" : "s", frontier["min_rows_per_group"].get<std::int64_t>(),
      cases.size());
  out += fmt::format("  {:<52} {:>10}  {:>14} {:>14}  {:>7}  {}\n", "group", "tok/s/user",
                     "best tok/s/GPU", "pick tok/s/GPU", "gap", "pick (✗: not within 10%)");
  for (const auto& c : cases) {
    const auto& best = c["best"]["measured"];
    std::string pick_gpu = "-";
    std::string gap = "none";
    std::string pick = "no configuration priced this fast";
    if (!c["pick"].is_null()) {
      const auto& p = c["pick"]["measured"];
      pick_gpu = fmt::format("{:.1f}", p["tokens_per_s_per_gpu"].get<double>());
      gap = fmt::format("{:.1f}%", c["gap_pct"].get<double>());
      pick = fmt::format("{} (measured {:.0f} tok/s/user)", c["pick"]["id"].get<std::string>(),
                         p["tokens_per_s_per_user"].get<double>());
    }
    out += fmt::format(
        "  {:<52} {:>10.0f}  {:>14.1f} {:>14}  {:>7}  {}{}\n", c["group"].get<std::string>(),
        c["bound_tokens_per_s_per_user"].get<double>(), best["tokens_per_s_per_gpu"].get<double>(),
        pick_gpu, gap, pick, c["within_10pct"].get<bool>() ? "" : "  ✗");
  }
  const auto& share = frontier["share_within_10pct"];
  out += fmt::format("within 10%: {}\n", share.is_null() ? std::string("-")
                                                         : fmt::format("{:.1f}% of the cases",
                                                                       100 * share.get<double>()));
  return out;
}

}  // namespace servesim::sim2real
