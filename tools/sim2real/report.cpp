#include "tools/sim2real/report.hpp"

#include <cmath>

#include <fmt/format.h>

namespace servesim::sim2real {
namespace {

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::round(v * 1000.0) / 1000.0;
}

nlohmann::json median_json(const MedianScore& m) {
  nlohmann::json j;
  j["runs"] = m.runs;
  j["overall"] = number(m.overall);
  for (std::size_t i = 0; i < metric_names().size(); ++i)
    j[metric_names()[i]] = number(m.metrics[i]);
  return j;
}

// {"e2e_mean": {"sim": …, "real": …, "ape": …, "signed": …}, …}
nlohmann::json metrics_json(const RunScore& score) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < metric_names().size(); ++i) {
    const MetricScore& m = score.metrics[i];
    j[metric_names()[i]] = {{"sim", number(m.sim)},
                            {"real", number(m.real)},
                            {"ape", number(m.ape)},
                            {"signed", number(m.signed_pct)}};
  }
  return j;
}

std::string median_line(const std::string& label, const MedianScore& m) {
  std::string out = fmt::format("{:<42}{:>4}", label, m.runs);
  for (double v : m.metrics) out += fmt::format("{:>10.1f}", v);
  out += fmt::format("{:>9.1f}\n", m.overall);
  return out;
}

}  // namespace

const char* score_set_name(ScoreSet s) {
  switch (s) {
    case ScoreSet::kFit:
      return "fit";
    case ScoreSet::kHeldOut:
      return "held_out";
    case ScoreSet::kApproximate:
      return "approximate";
    case ScoreSet::kOverloaded:
      return "overloaded";
  }
  return "";
}

ScoreSet score_set(const RunResult& r, const std::set<std::string>& held_out) {
  if (r.group == RunGroup::kOverloaded) return ScoreSet::kOverloaded;
  if (r.kind == ReplayKind::kApproximate) return ScoreSet::kApproximate;
  return held_out.count(r.experiment->id) ? ScoreSet::kHeldOut : ScoreSet::kFit;
}

void summarize(Report& report) {
  std::vector<const RunScore*> all;
  std::vector<std::vector<const RunScore*>> by_set(4);
  for (const auto& r : report.runs) {
    const ScoreSet s = score_set(r, report.held_out);
    by_set[static_cast<std::size_t>(s)].push_back(&r.score);
    if (s != ScoreSet::kOverloaded) all.push_back(&r.score);
  }
  report.median = median_score(all);
  report.sets.clear();
  for (std::size_t s = 0; s < by_set.size(); ++s) {
    if (!by_set[s].empty()) {
      report.sets.push_back({static_cast<ScoreSet>(s), median_score(by_set[s])});
    }
  }
}

std::string format_table(const Report& report) {
  std::string out;
  out += fmt::format(
      "sim2real: {} runs; cost model analytical; outputs {}; prefix caching {}; seed {}\n",
      report.runs.size(), report.options.output_tokens,
      report.options.prefix_caching ? "on" : "off", report.options.seed);
  out += fmt::format("engine profile: {}; async scheduling {}{}\n",
                     report.options.engine.empty() ? "per run, by image" : report.options.engine,
                     report.options.async_scheduling,
                     report.options.engine_substitutes.empty() ? "" : "; fitted constants");
  out += "\nper run: simulated / measured (ms) and APE (%)\n";
  for (const auto& r : report.runs) {
    const Experiment& e = *r.experiment;
    out += fmt::format(
        "\n{} [{}, {}] {} tp{} {} — engine {}, {} requests, wall {:.2f} s, "
        "preemptions {}\n",
        e.id, replay_kind_name(r.kind), score_set_name(score_set(r, report.held_out)), e.model,
        e.tp, e.workload, r.engine, r.requests, r.wall_s, r.preemptions);
    for (std::size_t i = 0; i < metric_names().size(); ++i) {
      const MetricScore& m = r.score.metrics[i];
      out += fmt::format("  {:<10}{:>12.2f}{:>12.2f}{:>8.1f}%{:>+9.1f}%\n", metric_names()[i],
                         m.sim, m.real, m.ape, m.signed_pct);
    }
    out += fmt::format("  {:<10}{:>41.1f}%\n", "overall", r.score.overall);
    if (r.per_request) {
      const RequestErrors& q = *r.per_request;
      out += fmt::format(
          "  per request ({} matched): E2E error p10/p50/p90 {:+.1f}/{:+.1f}/{:+.1f}%, |err| p50 "
          "{:.1f}% p90 {:.1f}%; TTFT p10/p50/p90 {:+.1f}/{:+.1f}/{:+.1f}%, |err| p50 {:.1f}% p90 "
          "{:.1f}%\n",
          q.matched, q.e2e_p10, q.e2e_p50, q.e2e_p90, q.e2e_abs_p50, q.e2e_abs_p90, q.ttft_p10,
          q.ttft_p50, q.ttft_p90, q.ttft_abs_p50, q.ttft_abs_p90);
    }
    if (r.sensitivity) {
      const Sensitivity& v = *r.sensitivity;
      out += fmt::format(
          "  sensitivity: step times {:+g}% / {:+g}% move E2E mean {:+.1f}% / {:+.1f}%, TTFT mean "
          "{:+.1f}% / {:+.1f}%, ITL mean {:+.1f}% / {:+.1f}%: E2E gain {:.1f}\n",
          v.delta * 100, -v.delta * 100, v.up_pct.e2e_mean, v.down_pct.e2e_mean, v.up_pct.ttft_mean,
          v.down_pct.ttft_mean, v.up_pct.itl_mean, v.down_pct.itl_mean, v.e2e_gain);
    }
    if (r.online) {
      const OnlineResult& on = *r.online;
      const std::string learned =
          on.mode == "peeking" ? "every request" : fmt::format("requests 0..{}", on.learned - 1);
      const std::string step = on.learn == "floor"
                                   ? fmt::format("step floor {:+.3f} ms", on.step_offset_ms)
                                   : fmt::format("step scale x{:.4f}", on.step_scale);
      out += fmt::format(
          "  online ({}, alpha {:g}, learning from {}): {}, request overhead "
          "{:+.3f} ms after {} observations (settled after {}); on the {} requests after the "
          "first {}: static {:.1f}%, online {:.1f}% (E2E mean {:+.1f}% / {:+.1f}%, TTFT mean "
          "{:+.1f}% / {:+.1f}%, ITL {:+.1f}% / {:+.1f}%)\n",
          on.mode, on.alpha, learned, step, on.overhead_offset_ms, on.observations,
          on.converged_after, on.scored_requests, on.learned, on.static_score.overall,
          on.online_score.overall, on.static_score.metrics[0].signed_pct,
          on.online_score.metrics[0].signed_pct, on.static_score.metrics[3].signed_pct,
          on.online_score.metrics[3].signed_pct, on.static_score.metrics[6].signed_pct,
          on.online_score.metrics[6].signed_pct);
    }
    if (!r.stages.empty()) {
      out += fmt::format("  per stage, signed error (%)  {:>7}", "req");
      for (const auto& n : metric_names()) out += fmt::format("{:>10}", n);
      out += fmt::format("{:>9}{}\n", "overall", r.sensitivity ? "  E2E gain" : "");
      for (const StageResult& st : r.stages) {
        out += fmt::format("    s{} {:>6g} req/s x {:>4g} s {:>7}", st.index, st.stage.rate,
                           st.stage.duration_s, st.requests);
        if (st.scored_requests == 0) {
          out += "  no request finished in the simulation\n";
          continue;
        }
        for (const MetricScore& m : st.score.metrics)
          out += fmt::format("{:>+10.1f}", m.signed_pct);
        out += fmt::format("{:>8.1f}%", st.score.overall);
        if (r.sensitivity) out += fmt::format("{:>10.1f}", st.e2e_gain);
        out += "\n";
      }
    }
    for (const auto& n : r.notes) out += "  note: " + n + "\n";
  }
  out += fmt::format("\n{:<42}{:>4}", "median APE (%)", "runs");
  for (const auto& n : metric_names()) out += fmt::format("{:>10}", n);
  out += fmt::format("{:>9}\n", "overall");
  if (report.median.runs > 0) out += median_line("all scored (not overloaded)", report.median);
  for (const auto& s : report.sets) {
    std::string label = score_set_name(s.set);
    if (s.set == ScoreSet::kHeldOut) label += " (exact; the figure that counts)";
    if (s.set == ScoreSet::kFit) label += " (exact)";
    if (s.set == ScoreSet::kOverloaded) label += " (not meaningful)";
    out += median_line(label, s.median);
  }
  std::vector<const RunScore*> static_rest, online_rest;
  for (const auto& r : report.runs) {
    if (!r.online || r.group != RunGroup::kScored || r.online->scored_requests == 0) continue;
    static_rest.push_back(&r.online->static_score);
    online_rest.push_back(&r.online->online_score);
  }
  if (!static_rest.empty()) {
    out += fmt::format("\nonline learner ({}, {}), on the requests after those it learned from:\n",
                       report.options.online, report.options.online_learn);
    out += median_line("static", median_score(static_rest));
    out += median_line("online", median_score(online_rest));
  }
  return out;
}

nlohmann::json to_json(const Report& report) {
  nlohmann::json doc;
  doc["runs"] = nlohmann::json::array();
  for (const auto& r : report.runs) {
    nlohmann::json j;
    j["id"] = r.experiment->id;
    j["model"] = r.experiment->model;
    j["tp"] = r.experiment->tp;
    j["workload"] = r.experiment->workload;
    j["replay"] = replay_kind_name(r.kind);
    j["engine"] = r.engine;
    j["stage0_only"] = r.stage0_only;
    j["set"] = score_set_name(score_set(r, report.held_out));
    j["overloaded"] = r.group == RunGroup::kOverloaded;
    j["requests"] = r.requests;
    j["scored_requests"] = r.scored_requests;
    j["preemptions"] = r.preemptions;
    j["sim_wait_p99_ms"] = r.sim_wait_p99_ms;
    j["mean_output_tokens"] = number(r.mean_output_tokens);
    j["wall_s"] = number(r.wall_s);
    j["notes"] = r.notes;
    j["metrics"] = metrics_json(r.score);
    j["overall"] = number(r.score.overall);
    j["stages"] = nlohmann::json::array();
    for (const StageResult& st : r.stages) {
      nlohmann::json s = {{"index", st.index},
                          {"rate", st.stage.rate},
                          {"duration_s", st.stage.duration_s},
                          {"requests", st.requests},
                          {"scored_requests", st.scored_requests}};
      if (st.scored_requests > 0) {
        s["metrics"] = metrics_json(st.score);
        s["overall"] = number(st.score.overall);
        s["e2e_gain"] = number(st.e2e_gain);
      }
      j["stages"].push_back(s);
    }
    if (r.sensitivity) {
      const Sensitivity& v = *r.sensitivity;
      nlohmann::json up, down;
      for (std::size_t i = 0; i < metric_names().size(); ++i) {
        up[metric_names()[i]] = number(metric(v.up_pct, i));
        down[metric_names()[i]] = number(metric(v.down_pct, i));
      }
      j["sensitivity"] = {{"delta_pct", number(v.delta * 100)},
                          {"e2e_gain", number(v.e2e_gain)},
                          {"up_pct", up},
                          {"down_pct", down}};
    }
    if (r.online) {
      const OnlineResult& on = *r.online;
      j["online"] = {{"mode", on.mode},
                     {"learn", on.learn},
                     {"alpha", on.alpha},
                     {"scored_from_request", on.learned},
                     {"observations", on.observations},
                     {"step_offset_ms", number(on.step_offset_ms)},
                     {"step_scale", number(on.step_scale)},
                     {"overhead_offset_ms", number(on.overhead_offset_ms)},
                     {"converged_after", on.converged_after},
                     {"scored_requests", on.scored_requests},
                     {"static", metrics_json(on.static_score)},
                     {"static_overall", number(on.static_score.overall)},
                     {"online", metrics_json(on.online_score)},
                     {"online_overall", number(on.online_score.overall)}};
    }
    if (r.per_request) {
      const RequestErrors& q = *r.per_request;
      j["per_request"] = {{"matched", q.matched},
                          {"e2e",
                           {{"p10", number(q.e2e_p10)},
                            {"p50", number(q.e2e_p50)},
                            {"p90", number(q.e2e_p90)},
                            {"abs_p50", number(q.e2e_abs_p50)},
                            {"abs_p90", number(q.e2e_abs_p90)}}},
                          {"ttft",
                           {{"p10", number(q.ttft_p10)},
                            {"p50", number(q.ttft_p50)},
                            {"p90", number(q.ttft_p90)},
                            {"abs_p50", number(q.ttft_abs_p50)},
                            {"abs_p90", number(q.ttft_abs_p90)}}}};
    }
    doc["runs"].push_back(j);
  }
  doc["median"] = median_json(report.median);
  doc["median_by_set"] = nlohmann::json::object();
  for (const auto& s : report.sets)
    doc["median_by_set"][score_set_name(s.set)] = median_json(s.median);
  doc["held_out"] = report.held_out;
  doc["options"] = {{"seed", report.options.seed},
                    {"output_tokens", report.options.output_tokens},
                    {"prefix_caching", report.options.prefix_caching},
                    {"stage_gap_s", report.options.stage_gap_s},
                    {"engine", report.options.engine},
                    {"async_scheduling", report.options.async_scheduling},
                    {"sensitivity_pct", report.options.sensitivity_delta * 100},
                    {"online", report.options.online},
                    {"online_alpha", report.options.online_alpha},
                    {"online_learn", report.options.online_learn},
                    {"learn_fraction", report.options.learn_fraction},
                    {"engine_substitutes", report.options.engine_substitutes}};
  return doc;
}

}  // namespace servesim::sim2real
