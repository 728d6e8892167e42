#include "tools/common/summary_table.hpp"

#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"

namespace servesim {

namespace {
// A number of summary.json as text with `decimals` decimals (× scale), or "n/a" where it is null
// (a statistic of no values).
std::string number_or_na(const nlohmann::json& v, int decimals, double scale = 1) {
  return v.is_null() ? std::string("n/a")
                     : fmt::format("{:.{}f}", scale * v.get<double>(), decimals);
}
// The note of one summary.json `provenance[]` entry.
std::string class_note(const nlohmann::json& p) {
  return price_class_note(p.value("arch", ""), p.value("memory_type", ""),
                          p.value("class_checked_on", std::vector<std::string>{}));
}

// "283.40 [270.12, 301.25]" (with `decimals`), or "n/a".
std::string band_text(const nlohmann::json& b, int decimals) {
  if (b.is_null()) return "n/a";
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", b["value"].get<double>(), decimals,
                     b["low"].get<double>(), decimals, b["high"].get<double>(), decimals);
}

}  // namespace

std::string format_bands(const nlohmann::json& b) {
  std::string regimes;
  for (const auto& r : b["regimes"]) {
    const std::string one =
        fmt::format("{} {}", r["regime"].get<std::string>(), r["gpu"].get<std::string>());
    regimes += (regimes.empty() ? "" : ", ") + one;
  }
  if (b["status"] == "unmeasured") {
    std::string missing;
    for (const auto& u : b["unmeasured"]) {
      missing += (missing.empty() ? "" : ", ") + u.get<std::string>();
    }
    return fmt::format("bands      unmeasured: no validation data for {}; no band is stated\n",
                       missing);
  }
  std::string out = fmt::format(
      "bands      80% step-pricing band over {} draws (value [low, high]); error model {}\n",
      b["draws"].get<std::size_t>(), display_path(b["error_model"].get<std::string>()));
  for (const char* m : {"ttft", "tbt", "tpot", "e2e"}) {
    const auto& x = b["latency_ms"][m];
    out += fmt::format("  {:<5} ms  p50 {}  p90 {}  p99 {}\n", m, band_text(x["p50"], 2),
                       band_text(x["p90"], 2), band_text(x["p99"], 2));
  }
  out += fmt::format("  throughput {} req/s  {} output tok/s\n",
                     band_text(b["throughput"]["requests_per_s"], 2),
                     band_text(b["throughput"]["output_tokens_per_s"], 1));
  if (!b["energy_j_per_output_token"].is_null()) {
    out += fmt::format("  energy     {} J/output token\n",
                       band_text(b["energy_j_per_output_token"], 3));
  }
  if (b.contains("slo_attainment") && !b["slo_attainment"].is_null()) {
    const auto& a = b["slo_attainment"];
    out +=
        fmt::format("  SLO attainment {:.2f}% [{:.2f}%, {:.2f}%]\n", 100 * a["value"].get<double>(),
                    100 * a["low"].get<double>(), 100 * a["high"].get<double>());
  }
  return out;
}

std::string price_class_note(const std::string& arch, const std::string& memory_type,
                             const std::vector<std::string>& checked_on) {
  if (memory_type.empty()) return "unvalidated class: its hardware file names no memory_type";
  const char* family = memory_type.starts_with("gddr") ? "GDDR" : "HBM";
  if (checked_on.empty()) {
    return fmt::format("unvalidated class: no profile of a{} {} card of this generation ({})",
                       family[0] == 'H' ? "n" : "", family, arch);
  }
  return fmt::format("its class ({} {}) is checked on {}", arch, family,
                     fmt::join(checked_on, ", "));
}

std::string format_summary_table(const nlohmann::json& s) {
  std::string out;
  const auto& req = s["requests"];
  out += fmt::format("{} — cost model {}, workload {}, seed {}\n", s["name"].get<std::string>(),
                     s["cost_model"].get<std::string>(), s["workload"].get<std::string>(),
                     s["seed"].get<std::uint64_t>());
  out += fmt::format(
      "requests   arrived {}  finished {}  rejected {}  preemptions {}{}\n",
      req["arrived"].get<std::int64_t>(), req["finished"].get<std::int64_t>(),
      req["rejected"].get<std::int64_t>(), req["preemptions"].get<std::int64_t>(),
      req.value("unfinished", std::int64_t{0}) > 0
          ? fmt::format("  unfinished {} (stopped early)", req["unfinished"].get<std::int64_t>())
          : std::string());
  out += fmt::format("makespan   {:.2f} s   throughput {:.2f} req/s  {:.1f} output tok/s\n",
                     s["makespan_s"].get<double>(), s["throughput"]["requests_per_s"].get<double>(),
                     s["throughput"]["output_tokens_per_s"].get<double>());
  out += fmt::format("{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "latency (ms)", "mean", "p50",
                     "p90", "p95", "p99", "max");
  for (const char* k : {"ttft", "tbt", "tpot", "e2e", "scheduling_delay"}) {
    const auto& m = s["latency_ms"][k];
    out +=
        fmt::format("{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", k, number_or_na(m["mean"], 2),
                    number_or_na(m["p50"], 2), number_or_na(m["p90"], 2), number_or_na(m["p95"], 2),
                    number_or_na(m["p99"], 2), number_or_na(m["max"], 2));
  }
  if (!s["slo"].is_null()) {
    out += fmt::format("SLO        attainment {:.2f}%   goodput {:.2f} req/s\n",
                       100.0 * s["slo"]["attainment"].get<double>(),
                       s["slo"]["goodput_requests_per_s"].get<double>());
  }
  if (!s["energy_j"].is_null()) {
    out += fmt::format(
        "energy     {:.1f} kJ   {:.3f} J/output token   fleet power mean {:.0f} W  peak {:.0f} W\n",
        s["energy_j"].get<double>() / 1e3, s["energy_j_per_output_token"].get<double>(),
        s["power_w"]["mean"].get<double>(), s["power_w"]["peak"].get<double>());
  }
  if (s.contains("autoscaling")) {
    const auto& t = s["autoscaling"]["totals"];
    out += fmt::format(
        "autoscale  replicas mean {:.2f} peak {}  {} up / {} down  {:.2f} replica-h  ${}  "
        "${}/1M output tok\n",
        t["mean_replicas"].get<double>(), t["peak_replicas"].get<int>(),
        t["scale_ups"].get<std::int64_t>(), t["scale_downs"].get<std::int64_t>(),
        t["replica_hours"].get<double>(), number_or_na(t["usd"], 2),
        number_or_na(t["usd_per_million_output_tokens"], 3));
  }
  if (s.contains("steady_state")) {
    const auto& w = s["steady_state"];
    out += fmt::format(
        "steady     {:.1f} s window ({} seats): {} output tok/s  ITL p50 {} p90 {} ms  power {} W  "
        "{} J/output token  batch {}\n",
        w["window_s"].get<double>(), w["seats"].get<std::int64_t>(),
        number_or_na(w["output_tok_s"], 0), number_or_na(w["itl_p50_ms"], 2),
        number_or_na(w["itl_p90_ms"], 2), number_or_na(w["power_w"], 0),
        number_or_na(w["j_per_token"], 3), number_or_na(w["avg_batch"], 1));
  }
  if (s.contains("sensitivity")) {
    const auto& v = s["sensitivity"];
    const auto& g = v["gain"];
    out += fmt::format(
        "sensitivity step times ±{:g}%: % change per 1% step-time error: ttft mean {} p99 "
        "{}, tpot mean {}, e2e mean {} p99 {}\n",
        v["delta_pct"].get<double>(), number_or_na(g["ttft"]["mean"], 1),
        number_or_na(g["ttft"]["p99"], 1), number_or_na(g["tpot"]["mean"], 1),
        number_or_na(g["e2e"]["mean"], 1), number_or_na(g["e2e"]["p99"], 1));
    if (v.contains("slo_attainment")) {
      const auto& a = v["slo_attainment"];
      out += fmt::format("           SLO attainment {:.2f}% at +{:g}%, {:.2f}% at -{:g}%\n",
                         100.0 * a["up"].get<double>(), v["delta_pct"].get<double>(),
                         100.0 * a["down"].get<double>(), v["delta_pct"].get<double>());
    }
    if (v.contains("warning")) {
      const auto& w = v["warning"];
      out += fmt::format(
          "warning    near capacity: {} moves {:.1f}% per 1% of step-time error (gain ≥ {:g}); "
          "a small pricing error becomes a large latency error here (see --bands)\n",
          w["metric"].get<std::string>(), w["gain"].get<double>(), w["threshold"].get<double>());
    }
  }
  if (s.contains("bands")) out += format_bands(s["bands"]);
  if (s.contains("workload_counts")) {
    const auto& c = s["workload_counts"];
    std::vector<std::string> parts;
    auto add = [&](const char* key, const char* what) {
      const auto n = c[key].get<std::int64_t>();
      if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
    };
    add("zero_prompt_rows_raised_to_1", "rows with prompt 0 raised to 1");
    add("zero_output_rows_raised_to_1", "rows with output 0 raised to 1");
    add("error_rows", "has_error rows replayed");
    add("clipped_to_max_tokens", "requests clipped to max_tokens");
    if (c.contains("left_out_by_prompt_tokens")) {
      add("left_out_by_prompt_tokens", "requests outside workload.prompt_tokens left out");
    }
    if (!parts.empty()) out += fmt::format("workload   {}\n", fmt::join(parts, ", "));
  }
  if (s.contains("sessions")) {
    const auto& c = s["sessions"];
    out += fmt::format(
        "sessions   started {}  completed {} ({} cut at max_prompt_tokens)  ended by a refusal {}  "
        "mean session {:.2f} s\n",
        c["started"].get<std::int64_t>(), c["completed"].get<std::int64_t>(),
        c["cut_at_max_prompt"].get<std::int64_t>(), c["ended_by_rejection"].get<std::int64_t>(),
        c["mean_session_s"].get<double>());
  }
  for (const auto& p : s.value("provenance", nlohmann::json::array())) {
    const auto& v = p["validated"];
    std::string checked =
        v.empty() ? std::string("nothing measured on this GPU") : v[0].get<std::string>();
    if (v.size() > 1) checked += fmt::format(" (+{} more in summary.json)", v.size() - 1);
    if (v.empty()) checked += "; " + class_note(p);
    out += fmt::format("prices     {}: {}; validated: {}\n", p["gpu"].get<std::string>(),
                       p["constants"].get<std::string>().empty()
                           ? std::string("no provenance in its hardware file")
                           : p["constants"].get<std::string>(),
                       checked);
  }
  for (const auto& r : s["replicas"]) {
    const int pp = r["pp"].get<int>();
    out += fmt::format(
        "replica {:<3} {:<10} tp{}{} {:<8} kv {:>7} blocks  steps {:>8}  busy {:.1f}%",
        r["id"].get<int>(), r["gpu"].get<std::string>(), r["tp"].get<int>(),
        (r.contains("attention_dp")
             ? fmt::format(" dp{} ep{}", r["attention_dp"].get<int>(), r["ep"].get<int>())
             : std::string()) +
            (pp > 1 ? fmt::format(" pp{}", pp) : ""),
        r["scheduler"].get<std::string>(), r["kv_blocks"].get<std::int64_t>(),
        r["steps"].get<std::int64_t>(), 100.0 * r["busy_fraction"].get<double>());
    if (r.contains("prefix_cache")) {
      const auto& p = r["prefix_cache"];
      const std::string rate = number_or_na(p["hit_rate"], 1, 100);
      out += fmt::format("  prefix hits {}{} of {} blocks, {} evicted", rate,
                         p["hit_rate"].is_null() ? "" : "%", p["query_blocks"].get<std::int64_t>(),
                         p["evicted_blocks"].get<std::int64_t>());
    }
    out += "\n";
  }
  if (s.contains("outputs")) {
    out += fmt::format("outputs    {}/\n", s["outputs"]["dir"].get<std::string>());
    for (const auto& n : s["outputs"]["notes"]) out += "note       " + n.get<std::string>() + "\n";
  }
  return out;
}

}  // namespace servesim
