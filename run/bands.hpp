#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "run/run_builder.hpp"
#include "run/run_cache.hpp"

namespace servesim {

// How a run's band is drawn: per draw, one quantile level per step kind, and per GPU of the
// fleet the step-time factor exp(log-ratio at that level) of its regime. Draws 0, 1, 2 put every
// kind at its 10th, 50th and 90th percentile (the fully correlated corners and the bias-corrected
// middle); further draws pick each kind's level in [0.1, 0.9] from the run's seed, so kinds move
// together or apart. `measured` is false when any regime the fleet needs is unmeasured; such a
// plan has no draws.
struct BandPlan {
  bool measured = true;
  std::vector<std::vector<double>> levels;  // [draw][step kind]
  struct Gpu {
    std::string name;
    std::vector<StepKindFactors> factors;  // [draw]
  };
  std::vector<Gpu> gpus;
  nlohmann::json regimes = nlohmann::json::array();  // what summary["bands"]["regimes"] states
  std::vector<std::string> unmeasured;               // "analytical/datasheet/prefill (b200)"
};
inline constexpr int kMinBandDraws = 3;
// The quantile level of step kind `kind` in draw `draw`: 0.1, 0.5, 0.9 for draws 0, 1, 2, then a
// level in [0.1, 0.9] drawn from `seed`.
double band_level(std::uint64_t seed, int draw, std::size_t kind);
inline constexpr int kMaxBandDraws = 50;
BandPlan plan_bands(const BuiltRun& run, const ErrorModel& model, int draws);

// The metrics summary (MetricsCollector's document, no outputs) of `config` run under each
// draw of `plan`, in draw order; the draws run in parallel and each is deterministic.
std::vector<nlohmann::json> run_band_draws(const RunConfig& config, const BandPlan& plan,
                                           RunCache* cache);

// summary["bands"]: for each latency percentile (p50, p90, p99 of ttft, tbt, tpot, e2e), each
// throughput and J/output token, {value, low, high}: the point estimate and the least and
// greatest of it and every draw (so the band always holds the point estimate); the regimes used;
// or {"status": "unmeasured", "unmeasured": [...]} when the plan has no draws.
nlohmann::json band_summary(const nlohmann::json& base, const BandPlan& plan,
                            const std::vector<nlohmann::json>& draws,
                            const std::string& error_model_file);

// A latency gain (sensitivity.gain: % change per 1% of step-time error) from which a run counts
// as near capacity. The error model's 80% bands run from 3–9% below to 3–22% above the priced
// step time; at gain 3 a 5% step-time error becomes 15% of latency, three times the pricing
// error itself, so the queue, not the pricing, sets the answer.
inline constexpr double kNearCapacityGain = 3.0;
// summary["sensitivity"]["warning"]: the largest gain of the mean and p99 of ttft and e2e, when
// it is at least kNearCapacityGain; null otherwise.
nlohmann::json near_capacity_warning(const nlohmann::json& sensitivity);

}  // namespace servesim
