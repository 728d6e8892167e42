#include "run/bands.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "run/simulation.hpp"
#include "sim/output/metrics.hpp"
#include "sim/util/splitmix.hpp"

namespace servesim {
namespace {

nlohmann::json band_of(const nlohmann::json& base, const std::vector<nlohmann::json>& draws,
                       const nlohmann::json::json_pointer& p) {
  const nlohmann::json& v = base.contains(p) ? base.at(p) : nlohmann::json();
  if (!v.is_number()) return nullptr;
  double lo = v.get<double>(), hi = lo;
  for (const auto& d : draws) {
    if (!d.contains(p) || !d.at(p).is_number()) return nullptr;
    lo = std::min(lo, d.at(p).get<double>());
    hi = std::max(hi, d.at(p).get<double>());
  }
  return {{"value", v}, {"low", lo}, {"high", hi}};
}

}  // namespace

double band_level(std::uint64_t seed, int draw, std::size_t kind) {
  if (draw < 3) return 0.1 + 0.4 * draw;
  const std::uint64_t x =
      stream_seed(seed, 1000 + static_cast<std::uint64_t>(draw) * kNumStepKinds + kind);
  return 0.1 + 0.8 * unit_draw(x);
}

BandPlan plan_bands(const BuiltRun& run, const ErrorModel& model, int draws) {
  BandPlan plan;
  const std::string cost_model(run.cost_model->name());
  for (int d = 0; d < draws; ++d) {
    std::vector<double> l;
    for (std::size_t k = 0; k < kNumStepKinds; ++k) l.push_back(band_level(run.config.seed, d, k));
    plan.levels.push_back(l);
  }
  for (const auto& r : run.fleet) {
    const std::string& gpu = r->spec.gpu->name;
    if (std::any_of(plan.gpus.begin(), plan.gpus.end(),
                    [&](const BandPlan::Gpu& g) { return g.name == gpu; })) {
      continue;
    }
    BandPlan::Gpu g{gpu, std::vector<StepKindFactors>(static_cast<std::size_t>(draws))};
    const std::string cls = model.gpu_class(gpu);
    for (std::size_t k = 0; k < kNumStepKinds; ++k) {
      const auto kind = static_cast<StepKind>(k);
      const std::string regime = cost_model + "/" + cls + "/" + std::string(step_kind_name(kind));
      const auto q = model.find(cost_model, cls, kind);
      if (!q) {
        plan.measured = false;
        plan.unmeasured.push_back(regime + " (" + gpu + ")");
        plan.regimes.push_back({{"gpu", gpu}, {"regime", regime}, {"status", "unmeasured"}});
        continue;
      }
      plan.regimes.push_back({{"gpu", gpu},
                              {"regime", regime},
                              {"rows", q->n},
                              {"factor_p10", std::exp(q->p10)},
                              {"factor_p50", std::exp(q->p50)},
                              {"factor_p90", std::exp(q->p90)}});
      for (std::size_t d = 0; d < g.factors.size(); ++d) {
        g.factors[d][k] = std::exp(q->log_ratio_at(plan.levels[d][k]));
      }
    }
    plan.gpus.push_back(std::move(g));
  }
  if (!plan.measured) plan.levels.clear();
  return plan;
}

std::vector<nlohmann::json> run_band_draws(const RunConfig& config, const BandPlan& plan,
                                           RunCache* cache) {
  std::vector<nlohmann::json> out(plan.levels.size());
  tbb::parallel_for(std::size_t{0}, out.size(), [&](std::size_t d) {
    Simulation sim(config, cache);
    std::vector<std::pair<const GpuSpec*, StepKindFactors>> factors;
    for (const auto& r : sim.fleet()) {
      for (const auto& g : plan.gpus) {
        if (g.name == r->spec.gpu->name) factors.emplace_back(r->spec.gpu, g.factors[d]);
      }
    }
    const StepKindScaledCostModel scaled(sim.cost_model(), std::move(factors));
    MetricsCollector metrics = sim.metrics(scaled);
    const EngineTotals totals = sim.run({.cost_model = &scaled, .observers = {&metrics}});
    out[d] = metrics.summary(totals, sim.fleet(), sim.network());
  });
  return out;
}

nlohmann::json band_summary(const nlohmann::json& base, const BandPlan& plan,
                            const std::vector<nlohmann::json>& draws,
                            const std::string& error_model_file) {
  nlohmann::json b;
  b["error_model"] = error_model_file;
  b["regimes"] = plan.regimes;
  if (!plan.measured) {
    b["status"] = "unmeasured";
    b["unmeasured"] = plan.unmeasured;
    return b;
  }
  b["status"] = "measured";
  b["draws"] = draws.size();
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& l : plan.levels) {
    nlohmann::json row;
    for (std::size_t k = 0; k < kNumStepKinds; ++k) {
      row[std::string(step_kind_name(static_cast<StepKind>(k)))] = l[k];
    }
    levels.push_back(row);
  }
  b["levels"] = levels;
  using Ptr = nlohmann::json::json_pointer;
  for (const char* metric : {"ttft", "tbt", "tpot", "e2e"}) {
    for (const char* stat : {"p50", "p90", "p99"}) {
      b["latency_ms"][metric][stat] =
          band_of(base, draws, Ptr(std::string("/latency_ms/") + metric + "/" + stat));
    }
  }
  for (const char* t : {"requests_per_s", "output_tokens_per_s"}) {
    b["throughput"][t] = band_of(base, draws, Ptr(std::string("/throughput/") + t));
  }
  b["energy_j_per_output_token"] = band_of(base, draws, Ptr("/energy_j_per_output_token"));
  if (base.contains("slo") && base["slo"].is_object()) {
    b["slo_attainment"] = band_of(base, draws, Ptr("/slo/attainment"));
  }
  return b;
}

nlohmann::json near_capacity_warning(const nlohmann::json& sensitivity) {
  std::string worst;
  double gain = 0;
  for (const char* metric : {"ttft", "e2e"}) {
    for (const char* stat : {"mean", "p99"}) {
      const nlohmann::json::json_pointer p(std::string("/gain/") + metric + "/" + stat);
      if (!sensitivity.contains(p) || !sensitivity.at(p).is_number()) continue;
      const double g = sensitivity.at(p).get<double>();
      if (g > gain) {
        gain = g;
        worst = std::string(metric) + " " + stat;
      }
    }
  }
  if (gain < kNearCapacityGain) return nullptr;
  return {{"metric", worst}, {"gain", gain}, {"threshold", kNearCapacityGain}};
}

}  // namespace servesim
