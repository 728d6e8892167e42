#include "tools/costmodel/transfer_study.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/rf/rf_cache.hpp"
#include "costmodels/rf/rf_profile_set.hpp"
#include "costmodels/rf/spec_scaler.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {
namespace {

using Clock = std::chrono::steady_clock;
using Slice = ProfileValidation::Slice;
using Pred = std::array<double, kNumVidurOps>;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Adds one row to `s` the way validate_profile does: ops where both sides are finite, and their
// sum as the MLP block.
void score(Slice& s, const VidurMlpRow& row, const Pred& pred_ns) {
  double block_pred = 0;
  double block_meas = 0;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    const double meas = row.ms[i] * 1e6;
    if (!std::isfinite(meas) || !std::isfinite(pred_ns[i])) continue;
    s.ops[i].add(pred_ns[i], meas);
    block_pred += pred_ns[i];
    block_meas += meas;
  }
  s.block.add(block_pred, block_meas);
  (row.num_tokens <= 128 ? s.decode_block : s.prefill_block).add(block_pred, block_meas);
}

const ModelSpec* find_catalog_model(Catalog& catalog, const std::string& id) {
  for (const std::string& n : catalog.model_names()) {
    std::string a = n;
    std::string b = id;
    for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (a == b) return &catalog.model(n, ConfigNode::flag("--model"));
  }
  return nullptr;
}

ErrorStats stats_of(double mape, int n) {
  ErrorStats e;
  e.abs_sum = mape / 100 * n;
  e.n = n;
  return e;
}

}  // namespace

TransferResult compute_transfer(const RfTransferArgs& a) {
  Catalog catalog(Catalog::default_dirs());
  const GpuSpec& home = catalog.gpu(a.home, ConfigNode::flag("--home"));
  const GpuSpec& target = catalog.gpu(a.target, ConfigNode::flag("--target"));
  const RfProfileSet home_set = RfProfileSet::open(a.profiles, home.names());
  const RfProfileSet target_set = RfProfileSet::open(
      a.target_profiles.empty() ? a.profiles : a.target_profiles, target.names());
  TransferResult r;
  r.home_gpu = home.name;
  r.target_gpu = target.name;
  for (const std::string& id : home_set.model_ids()) {
    if (!target_set.mlp_path(id)) continue;
    if (!a.model.empty() && !home_set.mlp_path(a.model)) continue;
    if (!a.model.empty() && *home_set.mlp_path(a.model) != *home_set.mlp_path(id)) continue;
    r.models.push_back(id);
  }
  if (r.models.empty()) {
    throw InputError("transfer: no model is profiled on both " + home.name + " (" +
                     home_set.gpu_dir() + ") and " + target.name + " (" + target_set.gpu_dir() +
                     ")" + (a.model.empty() ? "" : " matching '" + a.model + "'"));
  }
  const RfCache cache(a.use_cache ? a.cache_dir : "");
  for (const std::string& id : r.models) {
    const std::vector<VidurMlpRow> home_rows = read_vidur_mlp(home_set.require_mlp_path(id));
    const std::vector<VidurMlpRow> target_rows = read_vidur_mlp(target_set.require_mlp_path(id));
    const ModelSpec* cat_model = find_catalog_model(catalog, id);
    const ModelSpec model = model_from_profile(home_rows.front(), id, cat_model);
    std::set<int> home_tps;
    for (const VidurMlpRow& row : home_rows) home_tps.insert(row.tp);
    std::set<int> target_tps;
    for (const VidurMlpRow& row : target_rows) target_tps.insert(row.tp);
    for (int tp : home_tps) {
      if (!target_tps.count(tp)) continue;
      RfSource src{id, home_set.require_mlp_path(id), tp, ""};
      const RfLoaded loaded = load_or_train_rf(src, a.train, cache);
      const RfTables& t = loaded.tables;
      if (a.on_forests) {
        a.on_forests(loaded.cache_hit ? fmt::format("{} TP{}: forests from the cache", id, tp)
                                      : fmt::format("{} TP{}: forests trained in {:.1f} s", id, tp,
                                                    loaded.seconds));
      }
      r.rf_train_seconds += loaded.seconds;
      r.rf_tables += 1;
      r.rf_cache_hits += loaded.cache_hit ? 1 : 0;
      r.home_rf_cv_block.merge(stats_of(t.cv_block_mape, t.cv_n));
      r.home_rf_cv_decode.merge(stats_of(t.cv_decode_mape, t.cv_decode_n));
      r.home_rf_cv_prefill.merge(stats_of(t.cv_prefill_mape, t.cv_prefill_n));

      auto rf_pred = [&t](double tokens) {
        Pred p;
        for (std::size_t i = 0; i < kNumVidurOps; ++i) p[i] = t.ops[i](tokens) * 1e6;
        return p;
      };
      const auto a0 = Clock::now();
      ReplicaSpec rh;
      rh.gpu = &home;
      rh.model = &model;
      rh.tp = tp;
      rh.cuda_graphs = false;
      ReplicaSpec rt = rh;
      rt.gpu = &target;
      const LayerPricer home_pricer(rh, AnalyticalParams::for_gpu(home), AnalyticalTerms{});
      const LayerPricer target_pricer(rt, AnalyticalParams::for_gpu(target), AnalyticalTerms{});
      r.analytical_seconds += seconds_since(a0);
      const SpecScaler roofline(home, target, model, tp, SpecScaler::Mode::kRoofline);
      const SpecScaler hybrid(home, target, model, tp, SpecScaler::Mode::kAnalytical);
      for (const VidurMlpRow& row : home_rows) {
        if (row.tp != tp) continue;
        ++r.home_rows;
        score(r.home_rf, row, rf_pred(row.num_tokens));
        const auto t0 = Clock::now();
        const Pred an = home_pricer.vidur_ops_ns(row.num_tokens);
        r.analytical_seconds += seconds_since(t0);
        score(r.home_analytical, row, an);
      }
      for (const VidurMlpRow& row : target_rows) {
        if (row.tp != tp) continue;
        ++r.target_rows;
        const double n = row.num_tokens;
        const Pred verbatim = rf_pred(n);
        score(r.rf_verbatim, row, verbatim);
        Pred scaled = verbatim;
        Pred scaled_an = verbatim;
        const auto rr = roofline.ratios(n);
        const auto ra = hybrid.ratios(n);
        for (std::size_t i = 0; i < kNumVidurOps; ++i) {
          scaled[i] *= rr[i];
          scaled_an[i] *= ra[i];
        }
        score(r.rf_scaled, row, scaled);
        score(r.rf_scaled_analytical, row, scaled_an);
        const auto t0 = Clock::now();
        const Pred an = target_pricer.vidur_ops_ns(n);
        r.analytical_seconds += seconds_since(t0);
        score(r.analytical, row, an);
      }
    }
    for (int tp : target_tps) {
      if (!home_tps.count(tp)) r.skipped.push_back(fmt::format("{} TP{}", id, tp));
    }
  }
  return r;
}

}  // namespace servesim
