#include "tools/sweep/selection.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/input_error.hpp"
#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep {
namespace {

std::string known(const std::vector<std::string>& columns) {
  return fmt::format("{}", fmt::join(columns, ", "));
}

const char* op_text(bool at_least) { return at_least ? ">=" : "<="; }

}  // namespace

PointTable::PointTable(std::vector<std::string> columns, std::vector<std::vector<double>> rows)
    : columns_(std::move(columns)), rows_(std::move(rows)) {}

std::optional<std::size_t> PointTable::column(const std::string& name) const {
  const auto it = std::find(columns_.begin(), columns_.end(), name);
  if (it == columns_.end()) return {};
  return static_cast<std::size_t>(it - columns_.begin());
}

SloBound parse_slo(const std::string& arg, const std::vector<std::string>& columns) {
  const std::string flag = "--slo " + arg;
  SloBound b;
  b.text = arg;
  std::size_t op = arg.find(">=");
  std::size_t value_at = 0;
  if (op != std::string::npos) {
    b.at_least = true;
    value_at = op + 2;
  } else if ((op = arg.find("<=")) != std::string::npos) {
    value_at = op + 2;
  } else if ((op = arg.find('=')) != std::string::npos) {
    value_at = op + 1;
  } else {
    throw InputError(fmt::format(
        "{}: expected METRIC=BOUND (an upper bound), METRIC<=BOUND or METRIC>=BOUND", flag));
  }
  b.metric = arg.substr(0, op);
  if (std::find(columns.begin(), columns.end(), b.metric) == columns.end()) {
    throw InputError(
        fmt::format("{}: unknown metric '{}' (known: {})", flag, b.metric, known(columns)));
  }
  std::string rest = arg.substr(value_at);
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t comma = std::min(rest.find(',', start), rest.size());
    const std::string item = rest.substr(start, comma - start);
    const auto v = parse_number(item);
    if (!v) {
      throw InputError(
          fmt::format("{}: '{}' is not a number (expected BOUND or B1,B2,…)", flag, item));
    }
    b.values.push_back(*v);
    start = comma + 1;
  }
  return b;
}

Objective parse_pick(const std::string& arg, const std::vector<std::string>& columns) {
  const std::string flag = "--pick " + arg;
  const auto colon = arg.find(':');
  const std::string dir = arg.substr(0, colon);
  if (colon == std::string::npos || (dir != "max" && dir != "min")) {
    throw InputError(fmt::format("{}: expected max:NAME or min:NAME", flag));
  }
  Objective o;
  o.maximize = dir == "max";
  o.column = arg.substr(colon + 1);
  if (std::find(columns.begin(), columns.end(), o.column) == columns.end()) {
    throw InputError(fmt::format("{}: unknown metric or varied key '{}' (known: {})", flag,
                                 o.column, known(columns)));
  }
  return o;
}

bool meets(const PointTable& t, std::size_t point, const std::vector<Bound>& bounds) {
  for (const Bound& b : bounds) {
    const double v = t.at(point, b.column);
    if (std::isnan(v) || (b.at_least ? v < b.value : v > b.value)) return false;
  }
  return true;
}

double slack(const PointTable& t, std::size_t point, const Bound& b) {
  const double v = t.at(point, b.column);
  const double inside = b.at_least ? v - b.value : b.value - v;
  return b.value != 0 ? inside / std::abs(b.value) : inside;
}

Choice choose(const PointTable& t, const std::vector<Bound>& bounds, std::size_t objective,
              bool maximize) {
  std::vector<std::size_t> feasible;
  for (std::size_t p = 0; p < t.size(); ++p) {
    if (!std::isnan(t.at(p, objective)) && meets(t, p, bounds)) feasible.push_back(p);
  }
  // Stable: equal objectives keep grid order.
  std::stable_sort(feasible.begin(), feasible.end(), [&](std::size_t a, std::size_t b) {
    return maximize ? t.at(a, objective) > t.at(b, objective)
                    : t.at(a, objective) < t.at(b, objective);
  });
  Choice c;
  if (!feasible.empty()) c.best = feasible[0];
  if (feasible.size() > 1) c.runner_up = feasible[1];
  if (feasible.empty()) {
    double best_worst = -std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < t.size(); ++p) {
      double worst = std::numeric_limits<double>::infinity();
      for (const Bound& b : bounds) {
        const double s = slack(t, p, b);
        worst = std::isnan(s) ? -std::numeric_limits<double>::infinity() : std::min(worst, s);
      }
      if (worst > best_worst) {
        best_worst = worst;
        c.closest = p;
      }
    }
  }
  return c;
}

namespace {

// One SLO setting's bounds: every --slo at its single value, the listed one at value i.
std::vector<Bound> bounds_of(const std::vector<SloBound>& slos, const PointTable& t,
                             std::size_t i) {
  std::vector<Bound> out;
  out.reserve(slos.size());
  for (const auto& s : slos) {
    out.push_back(
        {*t.column(s.metric), s.at_least, s.values.size() > 1 ? s.values[i] : s.values[0]});
  }
  return out;
}

nlohmann::json point_json(const PointTable& t, std::size_t p, const std::vector<Bound>& bounds,
                          std::size_t objective, const std::vector<nlohmann::json>& values) {
  nlohmann::json j;
  j["point"] = p;
  j["values"] = values[p];
  j["objective"] = number_or_null(t.at(p, objective));
  j["bounds"] = nlohmann::json::array();
  for (const Bound& b : bounds) {
    j["bounds"].push_back({{"metric", t.columns()[b.column]},
                           {"op", op_text(b.at_least)},
                           {"bound", b.value},
                           {"value", number_or_null(t.at(p, b.column))},
                           {"slack", number_or_null(slack(t, p, b))}});
  }
  return j;
}

double ratio(const PointTable& t, std::optional<std::size_t> num, std::optional<std::size_t> den,
             std::size_t column) {
  if (!num || !den) return kNaN;
  const double d = t.at(*den, column);
  return d > 0 ? t.at(*num, column) / d : kNaN;
}

}  // namespace

nlohmann::json select_study(const SelectionSpec& spec, const PointTable& table,
                            const PointTable* oracle,
                            const std::vector<nlohmann::json>& point_values) {
  std::size_t settings = 1;
  const SloBound* listed = nullptr;
  for (const auto& s : spec.slos) {
    if (s.values.size() > 1) {
      if (listed) {
        throw InputError(fmt::format(
            "--slo {} and --slo {} both list values (expected at most one list of SLOs)",
            listed->text, s.text));
      }
      listed = &s;
      settings = s.values.size();
    }
  }
  const std::size_t objective = *table.column(spec.objective.column);
  const auto thr_column = table.column(spec.throughput);
  if (!thr_column) {
    throw InputError(fmt::format("--throughput {}: unknown metric (known: {})", spec.throughput,
                                 known(table.columns())));
  }
  const std::size_t thr = *thr_column;
  nlohmann::json out;
  out["objective"] =
      fmt::format("{}:{}", spec.objective.maximize ? "max" : "min", spec.objective.column);
  out["throughput"] = spec.throughput;
  out["slos"] = nlohmann::json::array();
  for (const auto& s : spec.slos) out["slos"].push_back(s.text);
  out["oracle"] = oracle != nullptr;
  out["settings"] = nlohmann::json::array();

  int picked = 0, same = 0, honoured = 0;
  std::vector<double> pick_fractions;
  std::vector<int> base_honoured(spec.baselines.size(), 0);
  std::vector<std::vector<double>> base_fractions(spec.baselines.size());
  for (std::size_t i = 0; i < settings; ++i) {
    const std::vector<Bound> bounds = bounds_of(spec.slos, table, i);
    const Choice c = choose(table, bounds, objective, spec.objective.maximize);
    nlohmann::json s;
    s["bounds"] = nlohmann::json::array();
    for (const Bound& b : bounds) {
      s["bounds"].push_back(
          {{"metric", table.columns()[b.column]}, {"op", op_text(b.at_least)}, {"bound", b.value}});
    }
    s["pick"] = c.best ? point_json(table, *c.best, bounds, objective, point_values)
                       : nlohmann::json(nullptr);
    s["runner_up"] = c.runner_up ? point_json(table, *c.runner_up, bounds, objective, point_values)
                                 : nlohmann::json(nullptr);
    if (c.closest) s["closest"] = point_json(table, *c.closest, bounds, objective, point_values);
    if (c.best) ++picked;
    std::optional<std::size_t> oracle_best;
    if (oracle) {
      const Choice tc = choose(*oracle, bounds, objective, spec.objective.maximize);
      oracle_best = tc.best;
      nlohmann::json tj;
      tj["pick"] = tc.best ? point_json(*oracle, *tc.best, bounds, objective, point_values)
                           : nlohmann::json(nullptr);
      tj["same_pick"] = c.best == tc.best;
      tj["pick_honoured"] =
          c.best ? nlohmann::json(meets(*oracle, *c.best, bounds)) : nlohmann::json(nullptr);
      tj["pick_on_oracle"] = c.best ? point_json(*oracle, *c.best, bounds, objective, point_values)
                                    : nlohmann::json(nullptr);
      const double f = ratio(*oracle, c.best, tc.best, thr);
      tj["throughput_fraction"] = number_or_null(f);
      pick_fractions.push_back(f);
      if (c.best == tc.best) ++same;
      if (c.best && meets(*oracle, *c.best, bounds)) ++honoured;
      s["oracle"] = tj;
    }
    s["baselines"] = nlohmann::json::array();
    for (std::size_t b = 0; b < spec.baselines.size(); ++b) {
      const std::size_t p = spec.baselines[b].point;
      nlohmann::json bj;
      bj["label"] = spec.baselines[b].label;
      bj["point"] = p;
      bj["meets"] = meets(table, p, bounds);
      bj["throughput_fraction"] = number_or_null(ratio(table, p, c.best, thr));
      if (oracle) {
        const bool ok = meets(*oracle, p, bounds);
        const double f = ratio(*oracle, p, oracle_best, thr);
        bj["oracle"] = {{"meets", ok}, {"throughput_fraction", number_or_null(f)}};
        base_honoured[b] += ok ? 1 : 0;
        base_fractions[b].push_back(f);
      } else {
        base_honoured[b] += meets(table, p, bounds) ? 1 : 0;
        base_fractions[b].push_back(ratio(table, p, c.best, thr));
      }
      s["baselines"].push_back(bj);
    }
    out["settings"].push_back(s);
  }

  nlohmann::json sum;
  const auto n = static_cast<double>(settings);
  sum["settings"] = settings;
  sum["picked"] = picked;
  if (oracle) {
    sum["same_pick_as_oracle"] = same;
    // Over the settings where the selector chose a point (choosing none is no breach).
    sum["pick_honour_rate"] = picked > 0 ? nlohmann::json(static_cast<double>(honoured) / picked)
                                         : nlohmann::json(nullptr);
    sum["pick_mean_throughput_fraction"] = number_or_null(mean_of_finite(pick_fractions).mean);
    nlohmann::json rho;
    for (const auto& s : spec.slos) {
      const std::size_t col = *table.column(s.metric);
      std::vector<double> x, y;
      for (std::size_t p = 0; p < table.size(); ++p) {
        if (std::isfinite(table.at(p, col)) && std::isfinite(oracle->at(p, col))) {
          x.push_back(table.at(p, col));
          y.push_back(oracle->at(p, col));
        }
      }
      rho[s.metric] = number_or_null(spearman(x, y));
    }
    sum["spearman"] = rho;
  }
  sum["baselines"] = nlohmann::json::array();
  for (std::size_t b = 0; b < spec.baselines.size(); ++b) {
    sum["baselines"].push_back(
        {{"label", spec.baselines[b].label},
         {"honour_rate", base_honoured[b] / n},
         {"mean_throughput_fraction", number_or_null(mean_of_finite(base_fractions[b]).mean)}});
  }
  out["summary"] = sum;
  return out;
}

namespace {

// A number with `decimals` decimals (none for a whole number, such as a varied budget).
std::string num(const nlohmann::json& v, int decimals = 2) {
  if (!v.is_number()) return "n/a";
  const double x = v.get<double>();
  if (x == std::round(x) && std::abs(x) < 1e15) return fmt::format("{:.0f}", x);
  return fmt::format("{:.{}f}", x, decimals);
}

std::string values_text(const nlohmann::json& values) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : values.items()) {
    parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string bounds_text(const nlohmann::json& bounds) {
  std::vector<std::string> parts;
  for (const auto& b : bounds) {
    parts.push_back(fmt::format("{} {} {:g}", b["metric"].get<std::string>(),
                                b["op"].get<std::string>(), b["bound"].get<double>()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string point_line(const char* label, const nlohmann::json& p, const std::string& objective) {
  std::string out =
      fmt::format("  {:<10} point {} ({})  {} {}\n", label, p["point"].get<std::size_t>(),
                  values_text(p["values"]), objective, num(p["objective"]));
  for (const auto& b : p["bounds"]) {
    out +=
        fmt::format("  {:<10}   {} {} (bound {:g}, slack {}%)\n", "",
                    b["metric"].get<std::string>(), num(b["value"]), b["bound"].get<double>(),
                    b["slack"].is_number() ? fmt::format("{:.1f}", 100 * b["slack"].get<double>())
                                           : std::string("n/a"));
  }
  return out;
}

}  // namespace

std::string format_selection(const nlohmann::json& sel) {
  std::string out;
  const std::string objective = sel["objective"].get<std::string>();
  const std::string column = objective.substr(objective.find(':') + 1);
  out += fmt::format("selection  pick {} subject to {}\n", objective,
                     fmt::join(sel["slos"].get<std::vector<std::string>>(), ", "));
  const bool oracle = sel["oracle"].get<bool>();
  for (const auto& s : sel["settings"]) {
    out += fmt::format("SLO {}\n", bounds_text(s["bounds"]));
    if (s["pick"].is_null()) {
      out += "  no point meets every bound\n";
      if (s.contains("closest")) out += point_line("closest", s["closest"], column);
    } else {
      out += point_line("pick", s["pick"], column);
      if (!s["runner_up"].is_null()) out += point_line("runner-up", s["runner_up"], column);
    }
    if (oracle) {
      const auto& t = s["oracle"];
      std::string line = t["pick"].is_null()
                             ? std::string("no point meets")
                             : fmt::format("point {} ({})", t["pick"]["point"].get<std::size_t>(),
                                           values_text(t["pick"]["values"]));
      if (t["same_pick"].get<bool>()) line += " (the same)";
      if (!t["pick_honoured"].is_null()) {
        line += fmt::format("; the pick {} the SLO there, at {} of the oracle pick's {}",
                            t["pick_honoured"].get<bool>() ? "honours" : "breaks",
                            num(t["throughput_fraction"], 3), sel["throughput"].get<std::string>());
      }
      out += fmt::format("  {:<10} {}\n", "oracle", line);
    }
    for (const auto& b : s["baselines"]) {
      const auto& judged = oracle ? b["oracle"] : b;
      out += fmt::format(
          "  {:<10} {}: {}, {} {} of the {}\n", "baseline", b["label"].get<std::string>(),
          judged["meets"].get<bool>() ? "meets" : "breaks", num(judged["throughput_fraction"], 3),
          sel["throughput"].get<std::string>(), oracle ? "oracle pick" : "pick");
    }
  }
  const auto& sum = sel["summary"];
  if (sum["settings"].get<std::size_t>() > 1 || oracle) {
    out += fmt::format("summary    {} of {} SLO settings picked", sum["picked"].get<int>(),
                       sum["settings"].get<std::size_t>());
    if (oracle) {
      std::vector<std::string> rho;
      for (const auto& [k, v] : sum["spearman"].items()) rho.push_back(k + " " + num(v, 3));
      out += fmt::format(
          "; the oracle's choice at {}; picks honoured on the oracle {}; throughput fraction {} "
          "(mean); Spearman {}",
          sum["same_pick_as_oracle"].get<int>(), num(sum["pick_honour_rate"], 3),
          num(sum["pick_mean_throughput_fraction"], 3), fmt::join(rho, ", "));
    }
    out += "\n";
    for (const auto& b : sum["baselines"]) {
      out += fmt::format("           baseline {}: honour rate {}, throughput fraction {} (mean)\n",
                         b["label"].get<std::string>(), num(b["honour_rate"], 3),
                         num(b["mean_throughput_fraction"], 3));
    }
  }
  return out;
}

}  // namespace servesim::sweep
