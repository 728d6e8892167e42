#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "sim/engine/engine.hpp"
#include "sim/engine/run_observer.hpp"
#include "sim/engine/slo.hpp"
#include "sim/output/quantile_sketch.hpp"

namespace servesim {

// Online metrics of a run (definitions in tools/README.md "Metrics"): latency distributions in
// quantile sketches (exact for small runs), counters, SLO attainment overall and per SLO class,
// and how far the router's waiting-time estimates were from the waits that followed. Memory is
// flat in the number of requests. Not thread-safe.
// For a benchmark client's run (Workload::benchmark_client) the warm-up requests
// (RequestSpec::warmup) are left out of every request statistic and summary["client"] reports
// the measured requests as the client does (vLLM's `bench serve`: duration from the first
// measured send to the last measured finish, throughputs over it, mean TTFT, TPOT, ITL and E2E).
class MetricsCollector : public RunObserver {
 public:
  // `request_overhead_ns` (CostModel::request_overhead_ns) is added to every TTFT and E2E.
  explicit MetricsCollector(SloPolicy slo = {}, SimTime request_overhead_ns = 0,
                            bool benchmark_client = false);

  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_tokens(std::span<const TokenEvent> tokens, SimTime now) override;
  void on_request_done(const Request& request, bool rejected) override;
  void on_transfer(const TransferRecord& transfer) override;

  // The summary.json document (stable keys; see tools/README.md). A disaggregated run passes its
  // link network: summary["disaggregation"] (transfers, bytes, links), else it is absent.
  nlohmann::json summary(const EngineTotals& totals, const Fleet& fleet,
                         const LinkNetwork* network = nullptr) const;

  const QuantileSketch& ttft_ms() const { return ttft_; }
  const QuantileSketch& tbt_ms() const { return tbt_; }
  const QuantileSketch& tpot_ms() const { return tpot_; }
  const QuantileSketch& e2e_ms() const { return e2e_; }
  const QuantileSketch& scheduling_delay_ms() const { return sched_; }
  std::int64_t slo_met() const { return slo_met_; }

 private:
  // What summary.json reports of one SLO class.
  struct ClassStats {
    std::int64_t done = 0;  // finished or rejected
    std::int64_t met = 0;
    std::int64_t rejected = 0;
    std::int64_t demoted = 0;
    QuantileSketch ttft, tbt, tpot, e2e;
  };

  std::int32_t class_of(const Request& r) const;
  nlohmann::json client_json() const;

  SloPolicy slo_;
  SimTime overhead_ns_ = 0;
  QuantileSketch ttft_, tbt_, tpot_, e2e_, sched_;
  std::vector<ClassStats> classes_;
  // The class of a request that names none: 0 when one unnamed set of bounds holds for every
  // request, else none (-1).
  std::int32_t default_class_ = -1;
  // Waiting-time estimates (Request::est_wait) against the wait that followed
  // (first_scheduled − arrival): absolute error in ms, and percentage error where the wait was
  // not zero.
  QuantileSketch wait_abs_error_ms_, wait_ape_pct_;
  // The estimate of the instant the deadline is judged at (Request::est_due) against the instant
  // it came (first token or finish): |error| in ms, the signed sum, and how many were early
  // (estimated before it came: optimistic).
  QuantileSketch due_abs_error_ms_;
  double due_signed_error_ms_ = 0;
  std::int64_t due_early_ = 0;
  std::int64_t served_past_deadline_ = 0;  // first scheduled after their deadline had passed
  double wait_signed_error_ms_ = 0;
  std::int64_t rejected_admission_ = 0;
  std::int64_t demoted_ = 0;
  bool hashed_requests_ = false;  // some request carried block hashes (RequestSpec::hashes)
  std::int64_t finished_ = 0;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t output_tokens_ = 0;
  std::int64_t slo_met_ = 0;
  std::int64_t preempted_requests_ = 0;
  std::int64_t prefill_tokens_computed_ = 0;
  // A benchmark client: its warm-ups left out, and the span of the measured requests.
  bool benchmark_client_ = false;
  std::int64_t warmups_ = 0;
  SimTime measured_first_send_ = -1;
  SimTime measured_last_finish_ = -1;
  // Disaggregation: each transfer's time on the links and its wait for decode room (ms).
  QuantileSketch transfer_ms_, handoff_wait_ms_;
};

nlohmann::json sketch_json(const QuantileSketch& s);

}  // namespace servesim
