#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::sweep {

// The metrics a sweep records of every run, flat, in the column order of points.csv: request
// counts, makespan and steps, throughput (output_tok_s, prefill_tok_s, total_tok_s = their sum,
// requests_per_s), every latency statistic as <metric>_<stat>_ms (ttft, tbt, tpot, e2e,
// scheduling_delay × mean, p50, p90, p95, p99, max), SLO attainment and goodput_req_s, the
// replicas' mean busy_fraction, energy, deadline scheduling (rejected_by_admission, demoted,
// served_past_deadline, the wait estimate's median absolute error in ms and in % of the wait,
// the due estimate's mean signed error). These names are what --slo and --pick take.
const std::vector<std::string>& metric_names();
std::optional<std::size_t> metric_index(const std::string& name);

// summary.json of one run (execute_run's document) → one value per metric_names() entry; NaN
// where the summary has null (no values, no SLO, no power model).
std::vector<double> flatten_summary(const nlohmann::json& summary);

}  // namespace servesim::sweep
