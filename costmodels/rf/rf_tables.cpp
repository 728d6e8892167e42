#include "costmodels/rf/rf_tables.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodels/analytical/profile_validation.hpp"
#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

// Fold of each row: a Fisher–Yates permutation from a fixed-seed generator (the same on every
// platform: mt19937_64 is fully specified, std::shuffle is not), dealt round-robin.
std::vector<int> folds_of(std::size_t n, int k, std::uint64_t seed) {
  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = i;
  std::mt19937_64 gen(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[gen() % i]);
  std::vector<int> fold(n);
  for (std::size_t i = 0; i < n; ++i)
    fold[perm[i]] = static_cast<int>(i % static_cast<std::size_t>(k));
  return fold;
}

// Runs tasks[0..n) on `threads` workers; rethrows the first failure.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  const auto count = static_cast<std::size_t>(std::clamp(threads, 1, 64));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(count, n); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

std::string RfTrainOptions::describe() const {
  return fmt::format("trees={} subsample={} seed={} depths={} cv_folds={} cv_trees={}",
                     forest.trees, forest.subsample, forest.seed, fmt::join(depth_grid, ","),
                     cv_folds, cv_trees);
}

RfFit fit_rf(const std::vector<float>& x, const std::vector<float>& y, const RfTrainOptions& o) {
  RfFit fit;
  const std::size_t n = y.size();
  const double lo = *std::min_element(x.begin(), x.end());
  const double hi = *std::max_element(x.begin(), x.end());
  ForestParams p = o.forest;
  p.threads = 1;
  const int k = std::min<int>(o.cv_folds, static_cast<int>(n));
  double best = std::numeric_limits<double>::infinity();
  if (k >= 2 && o.depth_grid.size() > 0) {
    const std::vector<int> fold = folds_of(n, k, o.forest.seed);
    for (int depth : o.depth_grid) {
      std::vector<double> pred(n, 0);
      for (int f = 0; f < k; ++f) {
        std::vector<float> tx, ty, vx;
        for (std::size_t i = 0; i < n; ++i) {
          if (fold[i] == f) {
            vx.push_back(x[i]);
          } else {
            tx.push_back(x[i]);
            ty.push_back(y[i]);
          }
        }
        ForestParams cp = p;
        cp.trees = o.cv_trees;
        cp.max_depth = depth;
        const std::vector<float> out = Forest::train(tx, ty, 1, cp).predict(vx);
        for (std::size_t i = 0, j = 0; i < n; ++i) {
          if (fold[i] == f) pred[i] = out[j++];
        }
      }
      double ape = 0;
      for (std::size_t i = 0; i < n; ++i) ape += std::abs(pred[i] - y[i]) / y[i];
      const double mape = 100 * ape / static_cast<double>(n);
      if (mape < best) {  // ties keep the shallower depth (grid order)
        best = mape;
        fit.depth = depth;
        fit.cv_mape = mape;
        fit.cv_pred = std::move(pred);
      }
    }
  } else {
    fit.depth = o.depth_grid.empty() ? p.max_depth : o.depth_grid.front();
  }
  p.max_depth = fit.depth;
  fit.fn = StepFunction::tabulate(Forest::train(x, y, 1, p), lo, hi);
  return fit;
}

RfTables train_rf_tables(const std::vector<VidurMlpRow>& rows, const std::string& model_id, int tp,
                         const std::vector<VidurNetworkRow>* all_reduce,
                         const RfTrainOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RfTables t;
  t.model_id = model_id;
  t.tp = tp;
  std::vector<const VidurMlpRow*> mine;
  std::set<int> degrees;
  for (const VidurMlpRow& r : rows) {
    degrees.insert(r.tp);
    if (r.tp == tp) mine.push_back(&r);
  }
  if (mine.empty()) {
    throw InputError(fmt::format("rf: the profile of '{}' has no rows for TP {} (profiled: {})",
                                 model_id, tp, fmt::join(degrees, ", ")));
  }
  t.mlp_rows = static_cast<int>(mine.size());

  // Tasks: one per op with data, plus the all-reduce forest.
  std::array<std::vector<std::size_t>, kNumVidurOps> used;  // rows (into `mine`) per op
  std::vector<std::size_t> tasks;
  for (std::size_t op = 0; op < kNumVidurOps; ++op) {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const double v = mine[i]->ms[op];
      if (std::isfinite(v) && v > 0) used[op].push_back(i);
    }
    if (!used[op].empty()) tasks.push_back(op);
  }
  std::vector<float> net_x, net_y;
  if (all_reduce != nullptr && tp > 1) {
    for (const VidurNetworkRow& r : *all_reduce) {
      if (r.num_workers == tp && r.devices_per_node == tp && r.ms > 0) {
        net_x.push_back(static_cast<float>(r.size_bytes));
        net_y.push_back(static_cast<float>(r.ms));
      }
    }
    if (net_x.empty()) {
      throw InputError(fmt::format(
          "rf: the network profile has no all_reduce rows for {} workers on one node", tp));
    }
    t.network_rows = static_cast<int>(net_x.size());
    tasks.push_back(kNumVidurOps);
  }
  std::array<RfFit, kNumVidurOps + 1> fits;
  parallel_for(tasks.size(), options.threads, [&](std::size_t task) {
    const std::size_t op = tasks[task];
    if (op == kNumVidurOps) {
      fits[op] = fit_rf(net_x, net_y, options);
      return;
    }
    std::vector<float> x, y;
    for (std::size_t i : used[op]) {
      x.push_back(static_cast<float>(mine[i]->num_tokens));
      y.push_back(static_cast<float>(mine[i]->ms[op]));
    }
    fits[op] = fit_rf(x, y, options);
  });

  std::vector<double> cv_block(mine.size(), 0), meas_block(mine.size(), 0);
  std::vector<bool> cv_ok(mine.size(), true);
  for (std::size_t op = 0; op < kNumVidurOps; ++op) {
    if (used[op].empty()) continue;
    t.ops[op] = std::move(fits[op].fn);
    t.depth[op] = fits[op].depth;
    t.cv_mape[op] = fits[op].cv_mape;
    if (fits[op].cv_pred.size() != used[op].size()) std::fill(cv_ok.begin(), cv_ok.end(), false);
    for (std::size_t j = 0; j < used[op].size() && j < fits[op].cv_pred.size(); ++j) {
      cv_block[used[op][j]] += fits[op].cv_pred[j];
      meas_block[used[op][j]] += mine[used[op][j]]->ms[op];
    }
  }
  if (!net_x.empty()) t.all_reduce = std::move(fits[kNumVidurOps].fn);
  ErrorStats all, decode, prefill;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (!cv_ok[i]) continue;
    all.add(cv_block[i], meas_block[i]);
    (mine[i]->num_tokens <= 128 ? decode : prefill).add(cv_block[i], meas_block[i]);
  }
  t.cv_block_mape = all.mape();
  t.cv_decode_mape = decode.mape();
  t.cv_prefill_mape = prefill.mape();
  t.cv_n = all.n;
  t.cv_decode_n = decode.n;
  t.cv_prefill_n = prefill.n;
  t.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

}  // namespace servesim
