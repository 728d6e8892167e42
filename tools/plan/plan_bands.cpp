#include "tools/plan/plan_bands.hpp"

#include <cstddef>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "run/bands.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sweep/point_metrics.hpp"

namespace servesim::decide {
namespace {

// One fleet run at one seed under every draw.
struct SeedDraws {
  bool stopped = false;
  bool measured = true;
  std::vector<std::string> unmeasured;
  std::vector<std::vector<double>> metrics;  // [draw][metric]
};

SeedDraws run_seed(const BandFleet& f, int seed_index, const PlanBandsRequest& r) {
  SeedDraws out;
  if (r.stop != nullptr && r.stop->load()) {
    out.stopped = true;
    return out;
  }
  const RunConfig cfg = f.config(seed_index);
  const BuiltRun run = build_run(cfg, r.cache);
  const BandPlan plan = servesim::plan_bands(run, *r.model, r.draws);
  if (!plan.measured) {
    out.measured = false;
    out.unmeasured = plan.unmeasured;
    return out;
  }
  for (const auto& d : run_band_draws(run.config, plan, r.cache)) {
    out.metrics.push_back(sweep::flatten_summary(d));
  }
  return out;
}

nlohmann::json verdict(const BandFleet& f, const std::vector<SeedDraws>& seeds,
                       const PlanBandsRequest& r) {
  nlohmann::json e = {{"fleet", f.fleet},
                      {"gpu", f.gpu},
                      {"tp", f.tp},
                      {"replicas", f.replicas},
                      {"objective", f.objective},
                      {"status", "measured"},
                      {"meets_in", nullptr}};
  for (const SeedDraws& s : seeds) {
    if (s.stopped) {
      e["status"] = "stopped";
      return e;
    }
  }
  for (const SeedDraws& s : seeds) {
    if (!s.measured) {
      e["status"] = "unmeasured";
      e["unmeasured"] = s.unmeasured;
      return e;
    }
  }
  const std::size_t metrics = sweep::metric_names().size();
  int met = 0;
  e["per_draw"] = nlohmann::json::array();
  for (std::size_t d = 0; d < static_cast<std::size_t>(r.draws); ++d) {
    std::vector<double> means;
    for (std::size_t m = 0; m < metrics; ++m) {
      std::vector<double> v;
      for (const SeedDraws& s : seeds) v.push_back(s.metrics[d][m]);
      means.push_back(mean_ci95(v).mean);
    }
    const sweep::PointTable t(sweep::metric_names(), {means});
    const bool ok = sweep::meets(t, 0, r.bounds);
    e["per_draw"].push_back(ok);
    met += ok ? 1 : 0;
  }
  e["meets_in"] = met;
  return e;
}

}  // namespace

nlohmann::json plan_bands(const PlanBandsRequest& r) {
  std::vector<const BandFleet*> fleets = {&r.pick};
  for (const BandFleet& f : r.cheaper) fleets.push_back(&f);
  const std::size_t seeds = static_cast<std::size_t>(std::max(r.seeds, 1));
  std::vector<std::vector<SeedDraws>> runs(fleets.size(), std::vector<SeedDraws>(seeds));
  tbb::task_arena arena(std::max(r.threads, 1));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, fleets.size() * seeds, [&](std::size_t i) {
      runs[i / seeds][i % seeds] = run_seed(*fleets[i / seeds], static_cast<int>(i % seeds), r);
    });
  });
  nlohmann::json out = {{"error_model", r.model->file()}, {"draws", r.draws}};
  out["pick"] = verdict(r.pick, runs[0], r);
  out["cheaper"] = nlohmann::json::array();
  bool cheaper_meets = false;
  for (std::size_t i = 1; i < fleets.size(); ++i) {
    out["cheaper"].push_back(verdict(*fleets[i], runs[i], r));
    const auto& m = out["cheaper"].back()["meets_in"];
    cheaper_meets = cheaper_meets || (m.is_number() && m.get<int>() > 0);
  }
  out["status"] = out["pick"]["status"];
  if (out["status"] == "measured") {
    out["near_tie"] = out["pick"]["meets_in"].get<int>() < r.draws || cheaper_meets;
  } else {
    out["near_tie"] = nullptr;
  }
  return out;
}

std::string format_plan_bands(const nlohmann::json& b) {
  const int draws = b["draws"].get<int>();
  const auto count = [&](const nlohmann::json& e, const char* verb) {
    if (e["status"] == "unmeasured") {
      return fmt::format("{}: unmeasured (no validation data for {})",
                         e["fleet"].get<std::string>(),
                         fmt::join(e["unmeasured"].get<std::vector<std::string>>(), ", "));
    }
    if (e["status"] == "stopped") {
      return fmt::format("{}: stopped before its draws ran", e["fleet"].get<std::string>());
    }
    return fmt::format("{} {} in {} of {} draws", e["fleet"].get<std::string>(), verb,
                       e["meets_in"].get<int>(), draws);
  };
  std::string out = fmt::format("bands      pick {}\n", count(b["pick"], "meets"));
  for (const auto& e : b["cheaper"]) out += fmt::format("  cheaper  {}\n", count(e, "would meet"));
  if (b["near_tie"].is_boolean()) {
    std::vector<std::string> why;
    const int pick_meets = b["pick"]["meets_in"].get<int>();
    if (pick_meets < draws) why.push_back(fmt::format("the pick misses in {}", draws - pick_meets));
    int cheaper = 0;
    for (const auto& e : b["cheaper"]) {
      cheaper += e["meets_in"].is_number() && e["meets_in"].get<int>() > 0 ? 1 : 0;
    }
    if (cheaper > 0) {
      why.push_back(fmt::format("{} cheaper fleet{} meet{} in some", cheaper,
                                cheaper == 1 ? "" : "s", cheaper == 1 ? "s" : ""));
    }
    out += why.empty()
               ? fmt::format(
                     "  clear    the pick meets in every draw and no cheaper fleet in "
                     "any (error model {})\n",
                     display_path(b["error_model"].get<std::string>()))
               : fmt::format("  near tie {} of the draws (error model {})\n", fmt::join(why, "; "),
                             display_path(b["error_model"].get<std::string>()));
  }
  return out;
}

}  // namespace servesim::decide
