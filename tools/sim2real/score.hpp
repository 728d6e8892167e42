#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/util/sample_stats.hpp"
#include "tools/sim2real/experiments.hpp"

namespace servesim::sim2real {

// One request's latencies (ms).
struct Latency {
  double e2e_ms = 0;
  double ttft_ms = 0;
};

// Quantiles as numpy's default computes them, which the measured summaries use: servesim::quantile
// reproduces experiments.csv from the traces.
using servesim::median;
using servesim::quantile;

// The seven metrics of a set of requests. ITL follows the measurements' definition:
// (E2E mean − TTFT mean) / (mean_output_tokens − 1).
Metrics metrics_of(const std::vector<Latency>& requests, double mean_output_tokens);

// The mean output token count a measurement's ITL was computed with: 1 + (E2E mean − TTFT mean)
// / ITL mean (the ITL definition solved for it); none when ITL is not positive. It equals the
// measured_output_len_mean column wherever that is given; for runs without a trace it is the only
// record of how many tokens the harness counted (Llama-2-7b runs count 0.76-0.84 of the
// ignore_eos output_len generated, re-tokenized text), so the simulated ITL divides by it too.
std::optional<double> implied_output_tokens(const Metrics& real);

// Simulated against measured value of one metric; errors in percent of the measured value.
struct MetricScore {
  double sim = 0;
  double real = 0;
  double ape = 0;         // |sim − real| / real × 100
  double signed_pct = 0;  // (sim − real) / real × 100
};
MetricScore score_metric(double sim, double real);

// Every metric of a run, and the run's overall error: the median of its metrics' APEs.
struct RunScore {
  std::vector<MetricScore> metrics;  // metric_names() order
  double overall = 0;
};
RunScore score_run(const Metrics& sim, const Metrics& real);

// Medians over runs (percent): per metric (metric_names() order) and overall (the median over
// runs of each run's overall). NaN when `runs` is empty.
struct MedianScore {
  std::vector<double> metrics;
  double overall = 0;
  std::size_t runs = 0;
};
MedianScore median_score(const std::vector<const RunScore*>& runs);

// Per-request errors of a replayed trace: simulated minus measured, matched by row index, over
// the rows both sides completed. Percentiles of the signed relative error (percent) and of its
// absolute value.
struct RequestErrors {
  std::int64_t matched = 0;
  // Signed relative error (sim − real) / real × 100 quantiles: p10, p50, p90; and the median
  // and p90 of the absolute relative error.
  double e2e_p10 = 0, e2e_p50 = 0, e2e_p90 = 0, e2e_abs_p50 = 0, e2e_abs_p90 = 0;
  double ttft_p10 = 0, ttft_p50 = 0, ttft_p90 = 0, ttft_abs_p50 = 0, ttft_abs_p90 = 0;
};
// `sim[i]` and `real[i]` describe trace row i; a row is used where both are present.
RequestErrors request_errors(const std::vector<std::optional<Latency>>& sim,
                             const std::vector<std::optional<Latency>>& real);

}  // namespace servesim::sim2real
