#include "tools/sweep/study.hpp"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "run/error_model.hpp"
#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/common/progress.hpp"
#include "tools/sweep/capacity.hpp"
#include "tools/sweep/grid.hpp"
#include "tools/sweep/parallel_items.hpp"
#include "tools/sweep/pick_flips.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/result_files.hpp"
#include "tools/sweep/run_request.hpp"
#include "tools/sweep/selection.hpp"
#include "tools/sweep/study_runner.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep {
namespace fs = std::filesystem;
namespace {

// The files a sweep writes into its folder; an earlier sweep's are removed before it runs.
const std::vector<std::string> kOutputFiles = {
    "points.csv",     "points.json",  "means.csv",     "oracle_points.csv", "oracle_means.csv",
    "selection.json", "capacity.csv", "capacity.json", "timing.csv",        "scaling.json",
    "frontier.png",   "metrics.png",  "capacity.png"};

// The value at a dotted key path of a config (list items by index), or none.
std::optional<ConfigNode> node_at(const ConfigNode& root, const std::string& path) {
  ConfigNode cur = root;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    if (cur.is_sequence()) {
      std::size_t idx = 0;
      const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), idx);
      if (ec != std::errc() || p != part.data() + part.size() || idx >= cur.size()) return {};
      cur = cur.at(idx);
    } else {
      auto next = cur.find(part);
      if (!next) return {};
      cur = *next;
    }
    start = dot + 1;
  }
  return cur;
}

}  // namespace

namespace detail {

Study::Study(const SweepOptions& o, const Shards& shards)
    : o_(o),
      shards_(shards),
      base_(load_run_config(o.config, o.sets, o.seed)),
      grid_(o.varies, o.zip, o.seeds, base_.seed) {
  for (const auto& a : grid_.axes()) {
    if (a.key == o.max_rate && !o.max_rate.empty()) {
      throw InputError(fmt::format(
          "--max-rate {}: the key is also varied (expected the rate to be searched, not set)",
          a.key));
    }
  }
  columns_ = metric_names();
  for (const auto& a : grid_.axes()) columns_.push_back(a.key);
  for (const auto& s : o.slos) slos_.push_back(parse_slo(s, columns_));
  if (!o.pick.empty()) objective_ = parse_pick(o.pick, columns_);
  if (!o.slos.empty() && o.pick.empty() && o.max_rate.empty()) {
    throw InputError("--slo needs --pick (the point to choose) or --max-rate (the rate to find)");
  }
  if (!o.max_rate.empty()) {
    if (!o.pick.empty()) {
      throw InputError("--max-rate and --pick: a capacity search picks no point (expected one)");
    }
    if (o.slos.empty()) throw InputError("--max-rate needs at least one --slo to meet");
    for (const auto& s : slos_) {
      if (s.values.size() > 1) {
        throw InputError(fmt::format(
            "--slo {}: --max-rate takes one value per bound (expected no list)", s.text));
      }
    }
    if (!o.oracle.empty()) throw InputError("--max-rate and --oracle: not both (expected one)");
  }
  if (!o.baselines.empty() && o.pick.empty()) {
    throw InputError("--baseline needs --pick (a baseline is scored beside the pick)");
  }
  if (!o.oracle.empty() && o.pick.empty()) {
    throw InputError("--oracle needs --pick (the oracle scores the picks)");
  }
  if (o.bands || !o.error_model.empty()) {
    if (o.pick.empty())
      throw InputError("--bands needs --pick (the decision whose flips it counts)");
    errors_ = ErrorModel::load(o.error_model.empty() ? ErrorModel::default_path() : o.error_model);
  }
  for (const auto& b : o.baselines) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= b.size()) {
      const std::size_t semi = std::min(b.find(';', start), b.size());
      parts.push_back(b.substr(start, semi - start));
      start = semi + 1;
    }
    const auto p = grid_.find(parts);
    if (!p) {
      std::vector<std::string> axes;
      for (const auto& a : grid_.axes()) {
        axes.push_back(fmt::format("{} in {}", a.key, fmt::join(a.values, ",")));
      }
      throw InputError(fmt::format(
          "--baseline {}: no grid point has these values (expected KEY=VALUE for every varied "
          "key, joined by ';': {})",
          b, fmt::join(axes, "; ")));
    }
    baselines_.push_back({b, *p});
  }
  dir_ = o.out_dir.empty() ? (fs::path("out") / base_.name / "sweep").string() : o.out_dir;
}

SweepReport Study::run() {
  validate();
  if (shards_.rank() == 0) clear_outputs();
  const std::vector<int> counts =
      o_.threads.empty() ? std::vector<int>{tbb::info::default_concurrency()} : o_.threads;
  nlohmann::json scaling = nlohmann::json::array();
  std::string first_results;
  double first_wall = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    // Caps the whole process, so that workers left from a pass with more threads do not spin
    // beside this one and slow it (they would on a machine with as many cores as threads).
    const tbb::global_control cap(tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(counts[k]));
    const auto start = std::chrono::steady_clock::now();
    const std::string results = o_.max_rate.empty() ? run_grid(counts[k]) : run_capacity(counts[k]);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (k == 0) {
      first_results = results;
      first_wall = wall;
    }
    scaling.push_back({{"threads", counts[k]},
                       {"ranks", shards_.size()},
                       {"wall_s", wall},
                       {"speedup", first_wall / wall},
                       {"efficiency", first_wall / wall * counts[0] / counts[k]},
                       {"identical", results == first_results}});
    total_wall_ = wall;
    threads_used_ = counts[k];
    if (stopped()) break;  // the later passes would only repeat the cut one
  }
  SweepReport report;
  if (shards_.rank() != 0) return report;
  const ResultFiles files(o_, grid_, base_.name, dir_, shown_metrics());
  if (o_.max_rate.empty()) {
    tables_ += files.write_points(requests_, outcomes_);
    if (objective_) write_selection(files);
  } else {
    tables_ += files.write_capacity(capacity_);
  }
  files.write_timing(requests_, outcomes_, runs_done_, total_wall_);
  if (counts.size() > 1) {
    std::ofstream(fs::path(dir_) / "scaling.json") << scaling.dump(2) << "\n";
    for (const auto& s : scaling) report.identical = report.identical && s["identical"].get<bool>();
    if (!o_.quiet) tables_ += ResultFiles::format_scaling(scaling);
  }
  report.writer = true;
  report.dir = dir_;
  report.plot_mode = o_.max_rate.empty() ? "sweep" : "capacity";
  report.tables = tables_;
  report.runs = runs_done_;
  report.wall_s = total_wall_;
  report.threads = threads_used_;
  report.ranks = shards_.size();
  report.complete = cut_ == 0;
  report.cut = cut_;
  return report;
}

RunRequest Study::request(std::size_t point, std::size_t replicate, bool oracle) const {
  RunRequest r;
  r.point = point;
  r.replicate = replicate;
  r.oracle = oracle;
  for (const auto& s : o_.sets) r.overrides.push_back({"--set", s});
  for (const auto& a : grid_.assignments(point)) r.overrides.push_back({"--vary", a});
  if (oracle) {
    for (const auto& a : o_.oracle) r.overrides.push_back({"--oracle", a});
  }
  r.seed = grid_.seeds()[replicate];
  return r;
}

std::string Study::label(std::size_t point) const {
  return grid_.axes().empty() ? fmt::format("point {}", point)
                              : fmt::format("point {} ({})", point, grid_.describe(point));
}

void Study::validate() {
  const bool with_oracle = !o_.oracle.empty();
  const std::size_t n = grid_.size() * (with_oracle ? 2 : 1);
  std::vector<std::string> errors(n);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < n; ++i) {
    if (shards_.mine(i)) mine.push_back(i);
  }
  const int threads = o_.threads.empty() ? tbb::info::default_concurrency() : o_.threads.back();
  parallel_items(mine.size(), threads, [&](std::size_t k) {
    const std::size_t i = mine[k];
    const std::size_t point = i % grid_.size();
    const bool oracle = i >= grid_.size();
    try {
      const RunRequest r = request(point, 0, oracle);
      const BuiltRun run = build_run(load_run_config(o_.config, r.overrides, r.seed), &cache_);
      for (const auto& rep : run.fleet) run.cost_model->lone_prefill(rep->spec, 1);
      if (!o_.max_rate.empty()) rate_of(run.config);
    } catch (const InputError& e) {
      errors[i] = fmt::format("{}{}: {}", label(point), oracle ? " with --oracle" : "", e.what());
    }
  });
  std::vector<std::string> local;
  for (const std::size_t i : mine) {
    if (!errors[i].empty()) local.push_back(nlohmann::json{{"i", i}, {"e", errors[i]}}.dump());
  }
  const std::size_t failed = shards_.sum(local.size());
  std::vector<std::pair<std::size_t, std::string>> ordered;  // grid order, the oracle's after
  for (const auto& e : shards_.gather(local)) {
    const auto j = nlohmann::json::parse(e);
    ordered.emplace_back(j["i"].get<std::size_t>(), j["e"].get<std::string>());
  }
  if (failed == 0) return;
  std::sort(ordered.begin(), ordered.end());
  std::string message = fmt::format("{} of {} sweep point{} invalid; nothing was run", failed, n,
                                    n == 1 ? " is" : "s are");
  for (const auto& [i, e] : ordered) message += "\n  " + e;
  throw InputError(message);
}

double Study::rate_of(const RunConfig& config) const {
  const auto node = node_at(config.root, o_.max_rate);
  if (!node || !node->is_scalar()) {
    throw InputError(fmt::format(
        "--max-rate {}: the config sets no such value (expected the key of a rate it sets, "
        "e.g. workload.arrival.qps)",
        o_.max_rate));
  }
  const double v = node->as_double();
  if (!(v > 0)) node->fail("expected a rate > 0 to start the search from");
  return v;
}

void Study::clear_outputs() const {
  make_output_folder(dir_, "--out");
  std::error_code ec;
  for (const auto& f : kOutputFiles) fs::remove(fs::path(dir_) / f, ec);
  fs::remove_all(fs::path(dir_) / "runs", ec);
}

RunOutcome Study::execute(const RunRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out;
  const auto cut_short = [&] {
    ++cut_;
    out.metrics.assign(metric_names().size(), kNaN);
    return out;
  };
  if (stopped()) return cut_short();
  Simulation sim(load_run_config(o_.config, r.overrides, r.seed), &cache_);
  RunOptions options;
  options.write_outputs = o_.keep_runs;
  if (o_.keep_runs) options.out_dir = run_dir(dir_, r);
  options.cache = &cache_;
  options.stop = o_.stop;
  std::vector<nlohmann::json> draws;
  if (errors_ && !r.oracle) {
    options.error_model = &*errors_;
    options.band_draws = o_.band_draws;
    options.band_draw_summaries = &draws;
  }
  const nlohmann::json summary = execute_run(sim, options);
  if (!summary["complete"].get<bool>()) return cut_short();
  out.metrics = flatten_summary(summary);
  for (const auto& d : draws) out.band_metrics.push_back(flatten_summary(d));
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::vector<RunOutcome> Study::run_all(const std::vector<RunRequest>& requests, int threads,
                                       Progress& progress) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (shards_.mine(i)) mine.push_back(i);
  }
  std::vector<RunOutcome> local(mine.size());
  std::vector<std::string> errors(mine.size());
  parallel_items(mine.size(), threads, [&](std::size_t k) {
    // An error is kept, not thrown, so every rank reaches the gather below.
    try {
      local[k] = execute(requests[mine[k]]);
    } catch (const InputError& e) {
      const RunRequest& r = requests[mine[k]];
      errors[k] = fmt::format("{} seed {}{}: {}", label(r.point), r.seed,
                              r.oracle ? " with --oracle" : "", e.what());
    }
    progress.done_one();
  });
  std::vector<std::string> encoded;
  std::size_t failed = 0;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    nlohmann::json j = {
        {"i", mine[k]}, {"wall_s", local[k].wall_s}, {"m", nlohmann::json::array()}};
    for (const double v : local[k].metrics) j["m"].push_back(number_or_null(v));
    for (const auto& d : local[k].band_metrics) {
      j["b"].push_back(nlohmann::json::array());
      for (const double v : d) j["b"].back().push_back(number_or_null(v));
    }
    if (!errors[k].empty()) {
      j["error"] = errors[k];
      ++failed;
    }
    encoded.push_back(j.dump());
  }
  failed = shards_.sum(failed);
  std::vector<RunOutcome> all(shards_.rank() == 0 ? requests.size() : 0);
  std::string first_error;  // of the first failed run in request order
  std::size_t first_failed = requests.size();
  for (const auto& e : shards_.gather(encoded)) {
    const auto j = nlohmann::json::parse(e);
    const auto i = j["i"].get<std::size_t>();
    RunOutcome& out = all[i];
    out.wall_s = j["wall_s"].get<double>();
    for (const auto& v : j["m"]) out.metrics.push_back(v.is_null() ? kNaN : v.get<double>());
    for (const auto& d : j.value("b", nlohmann::json::array())) {
      out.band_metrics.emplace_back();
      for (const auto& v : d)
        out.band_metrics.back().push_back(v.is_null() ? kNaN : v.get<double>());
    }
    if (j.contains("error") && i < first_failed) {
      first_failed = i;
      first_error = j["error"].get<std::string>();
    }
  }
  if (failed > 0) {
    throw InputError(fmt::format("{} run{} failed; the sweep wrote no results: {}", failed,
                                 failed == 1 ? "" : "s", first_error));
  }
  runs_done_ = requests.size();
  return all;
}

std::string Study::fingerprint(const std::vector<RunOutcome>& outcomes) {
  std::string s;
  for (const auto& o : outcomes) {
    for (const double v : o.metrics) s += fmt::format("{} ", v);
    s += "\n";
  }
  return s;
}

std::string Study::run_grid(int threads) {
  requests_.clear();
  for (int pass = 0; pass < (o_.oracle.empty() ? 1 : 2); ++pass) {
    for (std::size_t p = 0; p < grid_.size(); ++p) {
      for (std::size_t r = 0; r < grid_.seeds().size(); ++r) {
        requests_.push_back(request(p, r, pass == 1));
      }
    }
  }
  Progress progress(shards_.rank() == 0 ? o_.progress : nullptr, requests_.size() / shards_.size());
  outcomes_ = run_all(requests_, threads, progress);
  progress.finish();
  return fingerprint(outcomes_);
}

std::optional<PointTable> Study::draw_table(std::size_t draw) const {
  std::vector<std::vector<double>> rows;
  const std::size_t reps = grid_.seeds().size();
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    std::vector<double> row;
    for (std::size_t m = 0; m < metric_names().size(); ++m) {
      std::vector<double> v;
      for (std::size_t r = 0; r < reps; ++r) {
        const auto& d = outcomes_[p * reps + r].band_metrics;
        if (draw >= d.size()) return std::nullopt;
        v.push_back(d[draw][m]);
      }
      row.push_back(mean_ci95(v).mean);
    }
    for (const auto& text : grid_.values(p)) row.push_back(parse_number(text).value_or(kNaN));
    rows.push_back(std::move(row));
  }
  return PointTable(columns_, std::move(rows));
}

PointTable Study::table(bool oracle) const {
  std::vector<std::vector<double>> rows;
  const std::size_t reps = grid_.seeds().size();
  const std::size_t offset = oracle ? grid_.size() * reps : 0;
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    std::vector<double> row;
    for (std::size_t m = 0; m < metric_names().size(); ++m) {
      std::vector<double> v;
      for (std::size_t r = 0; r < reps; ++r)
        v.push_back(outcomes_[offset + p * reps + r].metrics[m]);
      row.push_back(mean_ci95(v).mean);
    }
    for (const auto& text : grid_.values(p)) row.push_back(parse_number(text).value_or(kNaN));
    rows.push_back(std::move(row));
  }
  return PointTable(columns_, std::move(rows));
}

std::vector<std::string> Study::shown_metrics() const {
  std::vector<std::string> shown = {"output_tok_s", "ttft_p99_ms", "tbt_p99_ms", "e2e_p99_ms"};
  if (base_.slo.any()) shown.push_back("attainment");
  for (const auto& s : slos_) {
    if (std::find(shown.begin(), shown.end(), s.metric) == shown.end()) shown.push_back(s.metric);
  }
  if (objective_ && metric_index(objective_->column) &&
      std::find(shown.begin(), shown.end(), objective_->column) == shown.end()) {
    shown.push_back(objective_->column);
  }
  return shown;
}

void Study::write_selection(const ResultFiles& files) {
  SelectionSpec spec;
  spec.slos = slos_;
  spec.objective = *objective_;
  spec.throughput = o_.throughput;
  spec.baselines = baselines_;
  const PointTable main = table(false);
  std::optional<PointTable> oracle;
  if (!o_.oracle.empty()) oracle = table(true);
  nlohmann::json sel = select_study(spec, main, oracle ? &*oracle : nullptr, files.point_values());
  sel["oracle_overrides"] = o_.oracle;
  if (cut_ > 0) sel["complete"] = false;  // picked among the runs done before a stop
  if (errors_) {
    std::vector<PointTable> draws;
    for (int d = 0; d < o_.band_draws; ++d) {
      auto t = draw_table(static_cast<std::size_t>(d));
      if (!t) break;
      draws.push_back(std::move(*t));
    }
    if (draws.empty()) {
      // A stopped sweep has runs without draws: no flip count either way.
      sel["bands"] = {{"status", cut_ > 0 ? "stopped" : "unmeasured"}};
    } else {
      sel["bands"] = pick_flips(spec, main, draws, files.point_values());
      sel["bands"]["status"] = "measured";
      std::vector<std::string> columns = {o_.throughput};
      for (const auto& b : slos_) columns.push_back(b.metric);
      sel["bands"]["points"] = band_ranges(main, draws, columns);
    }
  }
  std::ofstream(fs::path(dir_) / "selection.json") << sel.dump(2) << "\n";
  if (!o_.quiet) tables_ += format_selection(sel);
  if (!o_.quiet && sel.contains("bands")) {
    const auto& status = sel["bands"]["status"];
    tables_ += status == "unmeasured"
                   ? std::string(
                         "bands      unmeasured: the error model has no data for a "
                         "point's regime; no flip count is stated\n")
               : status == "stopped"
                   ? std::string("bands      stopped before every draw ran; no flip count\n")
                   : format_pick_flips(sel["bands"]);
  }
}

}  // namespace detail

SweepReport run_sweep(const SweepOptions& options, const Shards& shards) {
  detail::Study study(options, shards);
  return study.run();
}

}  // namespace servesim::sweep
