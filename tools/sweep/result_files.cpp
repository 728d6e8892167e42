#include "tools/sweep/result_files.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep {
namespace fs = std::filesystem;
namespace {}  // namespace

std::vector<nlohmann::json> ResultFiles::point_values() const {
  std::vector<nlohmann::json> out;
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    nlohmann::json v = nlohmann::json::object();
    const auto vals = grid_.values(p);
    for (std::size_t i = 0; i < vals.size(); ++i) v[grid_.axes()[i].key] = value_json(vals[i]);
    out.push_back(v);
  }
  return out;
}

std::string ResultFiles::csv_header(const char* after_axes) const {
  std::string h = "point";
  for (const auto& a : grid_.axes()) h.append(",").append(csv_text(a.key));
  return h + "," + after_axes;
}

std::string ResultFiles::csv_axes(std::size_t p) const {
  std::string row = std::to_string(p);
  for (const auto& v : grid_.values(p)) row.append(",").append(csv_text(v));
  return row;
}

// points.csv / means.csv (and the oracle's), points.json.
std::string ResultFiles::write_points(const std::vector<RunRequest>& requests,
                                      const std::vector<RunOutcome>& outcomes) const {
  const std::size_t reps = grid_.seeds().size();
  nlohmann::json doc;
  doc["config"] = o_.config;
  doc["name"] = name_;
  doc["sets"] = o_.sets;
  doc["axes"] = nlohmann::json::array();
  for (const auto& a : grid_.axes()) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : a.values) values.push_back(value_json(v));
    doc["axes"].push_back({{"key", a.key}, {"values", values}});
  }
  doc["zip"] = grid_.zipped();
  doc["seeds"] = grid_.seeds();
  doc["oracle"] = o_.oracle;
  doc["metrics"] = metric_names();
  // Written point by point, so that a large sweep never holds its whole document: the head's
  // keys, then "points" last, each point as doc.dump(2) would indent it.
  std::ofstream json_out(fs::path(dir_) / "points.json");
  json_out << "{\n";
  for (const auto& [k, v] : doc.items()) {
    json_out << "  " << nlohmann::json(k).dump() << ": " << indented(v.dump(2), 2) << ",\n";
  }
  json_out << "  \"points\": [";
  std::string table = table_header();
  const auto values = point_values();
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    nlohmann::json pj;
    pj["point"] = p;
    pj["values"] = values[p];
    for (int pass = 0; pass < (o_.oracle.empty() ? 1 : 2); ++pass) {
      nlohmann::json block;
      block["runs"] = nlohmann::json::array();
      std::vector<std::vector<double>> per_metric(metric_names().size());
      for (std::size_t r = 0; r < reps; ++r) {
        const std::size_t i = (pass == 1 ? grid_.size() * reps : 0) + p * reps + r;
        nlohmann::json run;
        run["seed"] = requests[i].seed;
        run["command"] = command_of(o_.config, requests[i]);
        if (o_.keep_runs) run["dir"] = run_dir(dir_, requests[i]);
        nlohmann::json m = nlohmann::json::object();
        for (std::size_t k = 0; k < metric_names().size(); ++k) {
          m[metric_names()[k]] = number_or_null(outcomes[i].metrics[k]);
          per_metric[k].push_back(outcomes[i].metrics[k]);
        }
        run["metrics"] = m;
        block["runs"].push_back(run);
      }
      nlohmann::json mean = nlohmann::json::object(), ci = nlohmann::json::object();
      for (std::size_t k = 0; k < metric_names().size(); ++k) {
        const MeanCi c = mean_ci95(per_metric[k]);
        mean[metric_names()[k]] = number_or_null(c.mean);
        ci[metric_names()[k]] = number_or_null(c.half_width);
      }
      block["mean"] = mean;
      block["ci95"] = ci;
      if (pass == 0) {
        for (const auto& [k, v] : block.items()) pj[k] = v;
      } else {
        pj["oracle"] = block;
      }
    }
    json_out << (p == 0 ? "\n    " : ",\n    ") << indented(pj.dump(2), 4);
    if (!o_.quiet) table += table_row(pj);
  }
  json_out << (grid_.size() > 0 ? "\n  ]\n}\n" : "]\n}\n");
  for (int pass = 0; pass < (o_.oracle.empty() ? 1 : 2); ++pass) {
    const std::string prefix = pass == 1 ? "oracle_" : "";
    std::ofstream runs(fs::path(dir_) / (prefix + "points.csv"));
    std::ofstream means(fs::path(dir_) / (prefix + "means.csv"));
    std::string metric_cols, stat_cols;
    for (const auto& m : metric_names()) {
      metric_cols += (metric_cols.empty() ? "" : ",") + m;
      stat_cols += fmt::format(",{}_mean,{}_ci95", m, m);
    }
    runs << csv_header("seed,") << metric_cols << "\n";
    means << csv_header("runs") << stat_cols << "\n";
    for (std::size_t p = 0; p < grid_.size(); ++p) {
      std::vector<std::vector<double>> per_metric(metric_names().size());
      for (std::size_t r = 0; r < reps; ++r) {
        const std::size_t i = (pass == 1 ? grid_.size() * reps : 0) + p * reps + r;
        runs << csv_axes(p) << "," << requests[i].seed;
        for (std::size_t k = 0; k < metric_names().size(); ++k) {
          runs << "," << csv_number(outcomes[i].metrics[k]);
          per_metric[k].push_back(outcomes[i].metrics[k]);
        }
        runs << "\n";
      }
      means << csv_axes(p) << "," << reps;
      for (const auto& v : per_metric) {
        const MeanCi c = mean_ci95(v);
        means << "," << csv_number(c.mean) << "," << csv_number(c.half_width);
      }
      means << "\n";
    }
  }
  return o_.quiet ? std::string() : table;
}

// `text` (a JSON dump) with every line after the first indented by `by` spaces.
std::string ResultFiles::indented(const std::string& text, int by) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out.append(static_cast<std::size_t>(by), ' ');
  }
  return out;
}

std::string ResultFiles::table_header() const {
  const bool ci = grid_.seeds().size() > 1;
  std::string out = fmt::format("{} — sweep of {} point{} × {} seed{}{}\n", name_, grid_.size(),
                                grid_.size() == 1 ? "" : "s", grid_.seeds().size(),
                                grid_.seeds().size() == 1 ? "" : "s",
                                o_.oracle.empty() ? "" : " (and the oracle's)");
  out += fmt::format("{:>5}", "point");
  for (const auto& a : grid_.axes()) {
    out += fmt::format("  {:>12}", a.key.substr(a.key.rfind('.') + 1));
  }
  for (const auto& m : shown_) out += fmt::format("  {:>{}}", m, ci ? 20 : 12);
  return out + "\n";
}

std::string ResultFiles::table_row(const nlohmann::json& p) const {
  const bool ci = grid_.seeds().size() > 1;
  std::string out = fmt::format("{:>5}", p["point"].get<std::size_t>());
  for (const auto& a : grid_.axes()) {
    const auto& v = p["values"][a.key];
    out += fmt::format("  {:>12}", v.is_string() ? v.get<std::string>() : v.dump());
  }
  for (const auto& m : shown_) {
    const auto& mean = p["mean"][m];
    const auto& half = p["ci95"][m];
    std::string cell = mean.is_number() ? fmt::format("{:.4g}", mean.get<double>()) : "n/a";
    if (ci && half.is_number()) cell += fmt::format(" ±{:.2g}", half.get<double>());
    out += fmt::format("  {:>{}}", cell, ci ? 20 : 12);
  }
  return out + "\n";
}

std::string ResultFiles::write_capacity(const std::vector<nlohmann::json>& capacity) const {
  const auto values = point_values();
  nlohmann::json doc;
  doc["config"] = o_.config;
  doc["name"] = name_;
  doc["rate_key"] = o_.max_rate;
  doc["rate_tol"] = o_.rate_tol;
  doc["slos"] = o_.slos;
  doc["seeds"] = grid_.seeds();
  doc["points"] = nlohmann::json::array();
  std::ofstream csv(fs::path(dir_) / "capacity.csv");
  std::string metric_cols;
  for (const auto& m : metric_names()) metric_cols += "," + m;
  csv << csv_header("max_rate,failing_rate,outcome,rates_tried,runs") << metric_cols << "\n";
  std::string table = fmt::format("{} — highest {} meeting {} ({} seed{} per rate)\n", name_,
                                  o_.max_rate, fmt::join(o_.slos, ", "), grid_.seeds().size(),
                                  grid_.seeds().size() == 1 ? "" : "s");
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    nlohmann::json j = capacity[p];
    j["values"] = values[p];
    csv << csv_axes(p) << ","
        << csv_number(j["max_rate"].is_null() ? kNaN : j["max_rate"].get<double>()) << ","
        << csv_number(j["failing_rate"].is_null() ? kNaN : j["failing_rate"].get<double>()) << ","
        << csv_text(j["outcome"].get<std::string>()) << "," << j["rates_tried"].get<int>() << ","
        << j["runs"].get<int>();
    for (const auto& m : metric_names()) {
      const auto& v = j["mean_at_max_rate"][m];
      csv << "," << (v.is_null() ? std::string() : csv_number(v.get<double>()));
    }
    csv << "\n";
    table += fmt::format("  point {:<3} {:<40} max rate {:>10}  (fails at {}; {}; {} runs)\n", p,
                         grid_.axes().empty() ? std::string("(the config)") : grid_.describe(p),
                         j["max_rate"].is_null() ? std::string("none")
                                                 : fmt::format("{:g}", j["max_rate"].get<double>()),
                         j["failing_rate"].is_null()
                             ? std::string("none tried")
                             : fmt::format("{:g}", j["failing_rate"].get<double>()),
                         j["outcome"].get<std::string>(), j["runs"].get<int>());
    doc["points"].push_back(j);
  }
  std::ofstream(fs::path(dir_) / "capacity.json") << doc.dump(2) << "\n";
  return o_.quiet ? std::string() : table;
}

// Wall time per run: kept out of points.* so that those files do not depend on the machine.
void ResultFiles::write_timing(const std::vector<RunRequest>& requests,
                               const std::vector<RunOutcome>& outcomes, std::size_t runs,
                               double total_wall_s) const {
  std::ofstream t(fs::path(dir_) / "timing.csv");
  if (!o_.max_rate.empty()) {
    t << "point,runs,total_wall_s\n";
    t << fmt::format("all,{},{}\n", runs, total_wall_s);
    return;
  }
  t << "run,point,seed,oracle,wall_s\n";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    t << fmt::format("{},{},{},{},{}\n", i, requests[i].point, requests[i].seed,
                     requests[i].oracle ? 1 : 0, outcomes[i].wall_s);
  }
}

std::string ResultFiles::format_scaling(const nlohmann::json& scaling) {
  std::string out = "thread scaling  threads  wall (s)  speedup  efficiency  identical\n";
  for (const auto& s : scaling) {
    out +=
        fmt::format("                {:>7}  {:>8.2f}  {:>7.2f}  {:>10.2f}  {}\n",
                    s["threads"].get<int>(), s["wall_s"].get<double>(), s["speedup"].get<double>(),
                    s["efficiency"].get<double>(), s["identical"].get<bool>() ? "yes" : "NO");
  }
  return out;
}

}  // namespace servesim::sweep
