// The report of sim2real --silicon: per row, simulated against measured mean TTFT and TPOT; the
// medians of |error| overall and per partition; coverage and every row not run, with its reason.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/util/sample_stats.hpp"
#include "tools/sim2real/mlenergy.hpp"
#include "tools/sim2real/silicon.hpp"
#include "tools/sim2real/silicon_fit.hpp"

namespace servesim::sim2real {
namespace {

std::string concurrency_bucket(std::int64_t c) {
  if (c <= 8) return "1-8";
  if (c <= 64) return "16-64";
  if (c <= 512) return "128-512";
  return ">=1024";
}

// The weight format the row is priced at; its precision column when servesim has none.
std::string precision_name(const SiliconRow& r) {
  const std::string f = silicon_weight_format(r);
  return !f.empty() ? f : r.precision;
}

// The partitions a row belongs to, as (partition, value).
std::vector<std::pair<std::string, std::string>> partitions(const SiliconRow& r) {
  return {
      {"engine", r.backend},
      {"mode", r.mode},
      {"engine_mode", fmt::format("{} {}", r.backend, r.mode)},
      {"system", r.system},
      {"precision", precision_name(r)},
      {"model", r.model_path},
      {"concurrency", concurrency_bucket(r.concurrency)},
      {"isl_osl", fmt::format("{}/{}", r.isl, r.osl)},
      {"engine_system_precision", fmt::format("{} {} {}", r.backend, r.system, precision_name(r))}};
}

nlohmann::json median_json(const std::vector<double>& ttft, const std::vector<double>& tpot) {
  const auto med = [](const std::vector<double>& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(v));
  };
  return {
      {"rows", ttft.size()}, {"ttft_mean_abs_pct", med(ttft)}, {"tpot_mean_abs_pct", med(tpot)}};
}

}  // namespace

nlohmann::json silicon_report_json(const std::vector<SiliconResult>& results,
                                   const SiliconOptions& options) {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json not_run = nlohmann::json::array();
  std::map<std::string, std::int64_t> reasons;
  std::vector<double> ttft_all, tpot_all;
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<double>, std::vector<double>>>
      parts;
  // Rows in an engine profile's declared fit set are reported but kept out of every median.
  std::vector<SiliconFitSet> fit_sets;
  for (const auto& [backend, profile] : options.engines) {
    if (auto set = silicon_fit_set(profile)) fit_sets.push_back(*set);
  }
  std::int64_t fitted = 0;
  for (const SiliconResult& r : results) {
    const SiliconRow& row = *r.row;
    if (!r.plan.not_run.empty()) {
      not_run.push_back({{"id", row.id}, {"where", row.where}, {"reason", r.plan.not_run}});
      ++reasons[r.plan.not_run];
      continue;
    }
    const double et = signed_error_pct(r.ttft_ms, row.ttft_ms);
    const double ep = signed_error_pct(r.tpot_ms, row.tpot_ms);
    const bool fit = std::any_of(fit_sets.begin(), fit_sets.end(),
                                 [&](const SiliconFitSet& f) { return f.contains(row); });
    rows.push_back(
        {{"id", row.id},
         {"engine", row.backend},
         {"mode", row.mode},
         {"system", row.system},
         {"precision", precision_name(row)},
         {"model", row.model_path},
         {"isl", row.isl},
         {"osl", row.osl},
         {"concurrency", row.concurrency},
         {"tp", row.tp},
         {"gpus", r.plan.gpus},
         {"fit", fit},
         {"preemptions", r.preemptions},
         {"metrics",
          {{"ttft_mean", {{"real", row.ttft_ms}, {"sim", r.ttft_ms}, {"error_pct", et}}},
           {"tpot_mean", {{"real", row.tpot_ms}, {"sim", r.tpot_ms}, {"error_pct", ep}}}}},
         {"wall_s", r.wall_s}});
    if (fit) {
      ++fitted;
      continue;
    }
    ttft_all.push_back(std::abs(et));
    tpot_all.push_back(std::abs(ep));
    for (const auto& key : partitions(row)) {
      parts[key].first.push_back(std::abs(et));
      parts[key].second.push_back(std::abs(ep));
    }
  }
  nlohmann::json by;
  for (const auto& [key, errs] : parts)
    by[key.first][key.second] = median_json(errs.first, errs.second);
  nlohmann::json reason_counts = nlohmann::json::object();
  for (const auto& [reason, n] : reasons) reason_counts[reason] = n;
  const auto total = static_cast<double>(results.size());
  return {{"seed", options.seed},
          {"engine_profiles", options.engines},
          {"coverage",
           {{"rows", results.size()},
            {"run", rows.size()},
            {"fit_rows", fitted},
            {"share", total > 0 ? static_cast<double>(rows.size()) / total : 0.0},
            {"not_run_by_reason", reason_counts}}},
          {"median", median_json(ttft_all, tpot_all)},
          {"partitions", by},
          {"rows", rows},
          {"not_run", not_run}};
}

std::string silicon_report_table(const nlohmann::json& report) {
  const auto pct = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.1f}%", v.get<double>());
  };
  const auto& cov = report["coverage"];
  std::string out =
      fmt::format("sim2real --silicon — {} of {} rows run ({:.1f}%), seed {}\n",
                  cov["run"].get<std::int64_t>(), cov["rows"].get<std::int64_t>(),
                  100 * cov["share"].get<double>(), report["seed"].get<std::uint64_t>());
  out += "engine profiles:";
  for (const auto& [backend, profile] : report["engine_profiles"].items()) {
    out += fmt::format(" {} {}", backend, profile.get<std::string>());
  }
  out += "\n";
  out += fmt::format("median |error| over the {} rows outside every fit set ({} fit rows apart)\n",
                     report["median"]["rows"].get<std::int64_t>(),
                     cov["fit_rows"].get<std::int64_t>());
  out += fmt::format("                 TTFT mean {}   TPOT mean {}\n",
                     pct(report["median"]["ttft_mean_abs_pct"]),
                     pct(report["median"]["tpot_mean_abs_pct"]));
  for (const auto& [partition, values] : report["partitions"].items()) {
    out += fmt::format("by {}\n", partition);
    for (const auto& [value, m] : values.items()) {
      out += fmt::format("  {:<36} {:>5} rows  TTFT {:>7}  TPOT {:>7}\n", value,
                         m["rows"].get<std::int64_t>(), pct(m["ttft_mean_abs_pct"]),
                         pct(m["tpot_mean_abs_pct"]));
    }
  }
  out += "not run\n";
  for (const auto& [reason, n] : cov["not_run_by_reason"].items()) {
    out += fmt::format("  {:>5} rows  {}\n", n.get<std::int64_t>(), reason);
  }
  return out;
}

}  // namespace servesim::sim2real
