// The sweep's --max-rate search: one bisection of the rate per grid point (detail::Study).
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/util/constants.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sweep/parallel_items.hpp"
#include "tools/sweep/point_metrics.hpp"
#include "tools/sweep/study_runner.hpp"
#include "tools/sweep/value_text.hpp"

namespace servesim::sweep::detail {
namespace fs = std::filesystem;

std::string Study::run_capacity(int threads) {
  std::vector<Bound> bounds;
  for (const auto& s : slos_) bounds.push_back({*metric_index(s.metric), s.at_least, s.values[0]});
  std::vector<std::size_t> mine;
  for (std::size_t p = 0; p < grid_.size(); ++p) {
    if (shards_.mine(p)) mine.push_back(p);
  }
  Progress progress(shards_.rank() == 0 ? o_.progress : nullptr, 0);
  std::vector<nlohmann::json> local(mine.size());
  std::atomic<std::size_t> runs{0};
  parallel_items(mine.size(), threads, [&](std::size_t k) {
    const std::size_t p = mine[k];
    try {
      local[k] = search_point(p, bounds, progress, runs);
    } catch (const InputError& e) {  // kept, so every rank reaches the gather
      local[k] = {{"point", p}, {"error", fmt::format("{}: {}", label(p), e.what())}, {"runs", 0}};
    }
  });
  progress.finish();
  std::vector<std::string> encoded;
  std::size_t failed = 0;
  for (const auto& j : local) {
    encoded.push_back(j.dump());
    failed += j.contains("error") ? 1 : 0;
  }
  failed = shards_.sum(failed);
  capacity_.assign(shards_.rank() == 0 ? grid_.size() : 0, nullptr);
  std::size_t total_runs = 0;
  for (const auto& e : shards_.gather(encoded)) {
    auto j = nlohmann::json::parse(e);
    total_runs += j["runs"].get<std::size_t>();
    const auto point = j["point"].get<std::size_t>();
    capacity_[point] = std::move(j);
  }
  if (failed > 0) {
    std::string first;
    for (const auto& j : capacity_) {
      if (j.contains("error")) {
        first = j["error"].get<std::string>();
        break;
      }
    }
    throw InputError(fmt::format("{} capacity search{} failed; the sweep wrote no results: {}",
                                 failed, failed == 1 ? "" : "es", first));
  }
  runs_done_ = shards_.rank() == 0 ? total_runs : runs.load();
  std::string fp;
  for (const auto& j : capacity_) fp += j.dump() + "\n";
  return fp;
}

nlohmann::json Study::search_point(std::size_t p, const std::vector<Bound>& bounds,
                                   Progress& progress, std::atomic<std::size_t>& runs) {
  const std::size_t reps = grid_.seeds().size();
  const RunRequest base = request(p, 0, false);
  const double start = rate_of(load_run_config(o_.config, base.overrides, base.seed));
  std::vector<double> means_at_max;
  nlohmann::json tried = nlohmann::json::array();
  const auto meets_at = [&](double rate) {
    progress.add_total(reps);
    std::vector<RunOutcome> out(reps);
    std::vector<RunRequest> reqs;
    for (std::size_t r = 0; r < reps; ++r) {
      RunRequest q = request(p, r, false);
      q.overrides.push_back({"--max-rate", fmt::format("{}={}", o_.max_rate, rate)});
      reqs.push_back(std::move(q));
    }
    tbb::parallel_for(std::size_t{0}, reps, [&](std::size_t r) {
      out[r] = execute(reqs[r]);
      progress.done_one();
    });
    runs += reps;
    std::vector<double> row;
    for (std::size_t m = 0; m < metric_names().size(); ++m) {
      std::vector<double> v;
      v.reserve(out.size());
      for (const auto& o : out) v.push_back(o.metrics[m]);
      row.push_back(mean_ci95(v).mean);
    }
    const PointTable t(metric_names(), {row});
    const bool ok = meets(t, 0, bounds);
    tried.push_back({{"rate", rate}, {"meets", ok}});
    if (ok) means_at_max = row;  // rates that meet only rise during the search
    return ok;
  };
  const CapacityResult c = find_max_rate(start, o_.rate_tol, meets_at);
  nlohmann::json j;
  j["point"] = p;
  j["start_rate"] = start;
  j["max_rate"] = number_or_null(c.max_rate);
  j["failing_rate"] = number_or_null(c.failing_rate);
  j["outcome"] = c.outcome;
  j["rates_tried"] = c.evaluations;
  j["runs"] = c.evaluations * static_cast<int>(reps);
  j["tried"] = tried;
  nlohmann::json m = nlohmann::json::object();
  for (std::size_t i = 0; i < metric_names().size(); ++i) {
    m[metric_names()[i]] =
        means_at_max.empty() ? nlohmann::json(nullptr) : number_or_null(means_at_max[i]);
  }
  j["mean_at_max_rate"] = m;
  if (std::isfinite(c.max_rate)) {
    RunRequest at = base;
    at.overrides.push_back({"--max-rate", fmt::format("{}={}", o_.max_rate, c.max_rate)});
    j["command"] = command_of(o_.config, at);
  }
  return j;
}

}  // namespace servesim::sweep::detail
