#include "tools/sim2real/score.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servesim::sim2real {

Metrics metrics_of(const std::vector<Latency>& requests, double mean_output_tokens) {
  Metrics m;
  std::vector<double> e2e;
  std::vector<double> ttft;
  e2e.reserve(requests.size());
  ttft.reserve(requests.size());
  double e2e_sum = 0;
  double ttft_sum = 0;
  for (const auto& r : requests) {
    e2e.push_back(r.e2e_ms);
    ttft.push_back(r.ttft_ms);
    e2e_sum += r.e2e_ms;
    ttft_sum += r.ttft_ms;
  }
  const double n = static_cast<double>(requests.size());
  m.e2e_mean = e2e_sum / n;
  m.ttft_mean = ttft_sum / n;
  m.e2e_p90 = quantile(e2e, 0.9);
  m.e2e_p99 = quantile(e2e, 0.99);
  m.ttft_p90 = quantile(ttft, 0.9);
  m.ttft_p99 = quantile(ttft, 0.99);
  m.itl_mean = (m.e2e_mean - m.ttft_mean) / (mean_output_tokens - 1);
  return m;
}

std::optional<double> implied_output_tokens(const Metrics& real) {
  if (!(real.itl_mean > 0) || !std::isfinite(real.itl_mean)) return std::nullopt;
  const double n = 1 + (real.e2e_mean - real.ttft_mean) / real.itl_mean;
  if (!(n > 1) || !std::isfinite(n)) return std::nullopt;
  return n;
}

MetricScore score_metric(double sim, double real) {
  MetricScore s;
  s.sim = sim;
  s.real = real;
  s.signed_pct = (sim - real) / real * 100.0;
  s.ape = std::abs(s.signed_pct);
  return s;
}

RunScore score_run(const Metrics& sim, const Metrics& real) {
  RunScore r;
  std::vector<double> apes;
  for (std::size_t i = 0; i < metric_names().size(); ++i) {
    r.metrics.push_back(score_metric(metric(sim, i), metric(real, i)));
    apes.push_back(r.metrics.back().ape);
  }
  r.overall = median(apes);
  return r;
}

MedianScore median_score(const std::vector<const RunScore*>& runs) {
  MedianScore m;
  m.runs = runs.size();
  std::vector<double> overall;
  overall.reserve(runs.size());
  for (const auto* r : runs) overall.push_back(r->overall);
  m.overall = median(overall);
  for (std::size_t i = 0; i < metric_names().size(); ++i) {
    std::vector<double> apes;
    apes.reserve(runs.size());
    for (const auto* r : runs) apes.push_back(r->metrics[i].ape);
    m.metrics.push_back(median(apes));
  }
  return m;
}

RequestErrors request_errors(const std::vector<std::optional<Latency>>& sim,
                             const std::vector<std::optional<Latency>>& real) {
  std::vector<double> e2e;
  std::vector<double> ttft;
  const std::size_t n = std::min(sim.size(), real.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!sim[i] || !real[i] || real[i]->e2e_ms <= 0 || real[i]->ttft_ms <= 0) continue;
    e2e.push_back((sim[i]->e2e_ms - real[i]->e2e_ms) / real[i]->e2e_ms * 100.0);
    ttft.push_back((sim[i]->ttft_ms - real[i]->ttft_ms) / real[i]->ttft_ms * 100.0);
  }
  RequestErrors r;
  r.matched = static_cast<std::int64_t>(e2e.size());
  auto fill = [](std::vector<double>& v, double& p10, double& p50, double& p90, double& a50,
                 double& a90) {
    p10 = quantile(v, 0.1);
    p50 = quantile(v, 0.5);
    p90 = quantile(v, 0.9);
    for (double& x : v) x = std::abs(x);
    a50 = quantile(v, 0.5);
    a90 = quantile(v, 0.9);
  };
  fill(e2e, r.e2e_p10, r.e2e_p50, r.e2e_p90, r.e2e_abs_p50, r.e2e_abs_p90);
  fill(ttft, r.ttft_p10, r.ttft_p50, r.ttft_p90, r.ttft_abs_p50, r.ttft_abs_p90);
  return r;
}

}  // namespace servesim::sim2real
