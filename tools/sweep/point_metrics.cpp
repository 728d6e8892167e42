#include "tools/sweep/point_metrics.hpp"

#include <algorithm>
#include <limits>

namespace servesim::sweep {
namespace {

constexpr const char* kLatencies[] = {"ttft", "tbt", "tpot", "e2e", "scheduling_delay"};
constexpr const char* kStats[] = {"mean", "p50", "p90", "p95", "p99", "max"};

double value_or_nan(const nlohmann::json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        "arrived",       "finished",      "rejected",   "preemptions", "preempted_requests",
        "prompt_tokens", "output_tokens", "makespan_s", "steps",       "requests_per_s",
        "output_tok_s",  "prefill_tok_s", "total_tok_s"};
    for (const char* m : kLatencies) {
      for (const char* s : kStats) n.push_back(std::string(m) + "_" + s + "_ms");
    }
    for (const char* m :
         {"attainment", "goodput_req_s", "busy_fraction", "energy_j", "energy_j_per_output_token",
          "rejected_by_admission", "demoted", "served_past_deadline", "wait_est_abs_error_p50_ms",
          "wait_est_ape_p50_pct", "due_est_mean_signed_error_ms"}) {
      n.emplace_back(m);
    }
    return n;
  }();
  return names;
}

std::optional<std::size_t> metric_index(const std::string& name) {
  const auto& n = metric_names();
  const auto it = std::find(n.begin(), n.end(), name);
  if (it == n.end()) return {};
  return static_cast<std::size_t>(it - n.begin());
}

std::vector<double> flatten_summary(const nlohmann::json& s) {
  std::vector<double> v;
  v.reserve(metric_names().size());
  const auto& r = s.at("requests");
  for (const char* k : {"arrived", "finished", "rejected", "preemptions", "preempted_requests",
                        "prompt_tokens", "output_tokens"}) {
    v.push_back(value_or_nan(r.at(k)));
  }
  v.push_back(value_or_nan(s.at("makespan_s")));
  v.push_back(value_or_nan(s.at("steps")));
  const auto& t = s.at("throughput");
  const double output = value_or_nan(t.at("output_tokens_per_s"));
  const double prefill = value_or_nan(t.at("prefill_tokens_per_s"));
  v.push_back(value_or_nan(t.at("requests_per_s")));
  v.push_back(output);
  v.push_back(prefill);
  v.push_back(output + prefill);
  for (const char* m : kLatencies) {
    for (const char* st : kStats) v.push_back(value_or_nan(s.at("latency_ms").at(m).at(st)));
  }
  const auto& slo = s.at("slo");
  v.push_back(slo.is_null() ? value_or_nan(nullptr) : value_or_nan(slo.at("attainment")));
  v.push_back(slo.is_null() ? value_or_nan(nullptr)
                            : value_or_nan(slo.at("goodput_requests_per_s")));
  double busy = 0;
  for (const auto& rep : s.at("replicas")) busy += rep.at("busy_fraction").get<double>();
  v.push_back(s.at("replicas").empty() ? value_or_nan(nullptr)
                                       : busy / static_cast<double>(s.at("replicas").size()));
  v.push_back(value_or_nan(s.at("energy_j")));
  v.push_back(value_or_nan(s.at("energy_j_per_output_token")));
  v.push_back(value_or_nan(r.at("rejected_by_admission")));
  v.push_back(value_or_nan(r.at("demoted")));
  v.push_back(slo.is_null() ? value_or_nan(nullptr) : value_or_nan(slo.at("served_past_deadline")));
  const auto& w = s.at("wait_estimate");
  v.push_back(w.is_null() ? value_or_nan(nullptr) : value_or_nan(w.at("abs_error_ms").at("p50")));
  v.push_back(w.is_null() ? value_or_nan(nullptr) : value_or_nan(w.at("ape_pct").at("p50")));
  v.push_back(w.is_null() ? value_or_nan(nullptr) : value_or_nan(w.at("due_mean_signed_error_ms")));
  return v;
}

}  // namespace servesim::sweep
