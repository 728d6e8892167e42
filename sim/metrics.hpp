#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "sim/engine.hpp"
#include "sim/quantile_sketch.hpp"
#include "sim/run_observer.hpp"

namespace servesim {

// Service-level objectives of a run; a request meets its SLO when every given bound holds.
// tbt_ms bounds every gap between the request's consecutive output tokens.
struct SloSpec {
  std::optional<double> ttft_ms;
  std::optional<double> tbt_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2e_ms;
  bool any() const { return ttft_ms || tbt_ms || tpot_ms || e2e_ms; }
};

// Online metrics of a run (definitions in tools/README.md "Metrics"): latency distributions in
// quantile sketches (exact for small runs), counters and SLO attainment. Memory is flat in the
// number of requests. Not thread-safe.
class MetricsCollector : public RunObserver {
 public:
  // `request_overhead_ns` (CostModel::request_overhead_ns) is added to every TTFT and E2E.
  explicit MetricsCollector(SloSpec slo = {}, SimTime request_overhead_ns = 0);

  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_token(const Request& request, SimTime now, SimTime gap_ns) override;
  void on_request_done(const Request& request, bool rejected) override;

  // The summary.json document (stable keys; see tools/README.md).
  nlohmann::json summary(const EngineTotals& totals, const Fleet& fleet) const;

  const QuantileSketch& ttft_ms() const { return ttft_; }
  const QuantileSketch& tbt_ms() const { return tbt_; }
  const QuantileSketch& tpot_ms() const { return tpot_; }
  const QuantileSketch& e2e_ms() const { return e2e_; }
  const QuantileSketch& scheduling_delay_ms() const { return sched_; }
  std::int64_t slo_met() const { return slo_met_; }

 private:
  SloSpec slo_;
  SimTime overhead_ns_ = 0;
  QuantileSketch ttft_, tbt_, tpot_, e2e_, sched_;
  std::int64_t finished_ = 0;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t output_tokens_ = 0;
  std::int64_t slo_met_ = 0;
  std::int64_t preempted_requests_ = 0;
  std::int64_t prefill_tokens_computed_ = 0;
  double energy_j_ = 0;
};

nlohmann::json sketch_json(const QuantileSketch& s);

}  // namespace servesim
