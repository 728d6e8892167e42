#include "costmodels/rf/rf_transfer.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
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

nlohmann::json slice_json(const Slice& s) {
  nlohmann::json j;
  j["mlp_block"] = {{"mape", s.block.mape()},
                    {"mean_signed_error", s.block.mspe()},
                    {"decode_mape", s.decode_block.mape()},
                    {"prefill_mape", s.prefill_block.mape()},
                    {"n", s.block.n},
                    {"decode_n", s.decode_block.n},
                    {"prefill_n", s.prefill_block.n}};
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (s.ops[i].n == 0) continue;
    j["ops"][std::string(vidur_op_name(static_cast<VidurOp>(i)))] = {
        {"mape", s.ops[i].mape()}, {"mean_signed_error", s.ops[i].mspe()}, {"n", s.ops[i].n}};
  }
  return j;
}

// Best pure-RF block MAPE on the target (verbatim or roofline-scaled) and its name.
std::pair<double, std::string> best_rf(const TransferResult& r) {
  return r.rf_scaled.block.mape() <= r.rf_verbatim.block.mape()
             ? std::pair{r.rf_scaled.block.mape(), std::string("rf_scaled")}
             : std::pair{r.rf_verbatim.block.mape(), std::string("rf_verbatim")};
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

std::string run_transfer(const RfTransferArgs& a) {
  const TransferResult r = compute_transfer(a);
  const auto [best, best_name] = best_rf(r);
  const double an = r.analytical.block.mape();
  if (a.json) {
    nlohmann::json j;
    j["home"] = {{"gpu", r.home_gpu},
                 {"rows", r.home_rows},
                 {"rf", slice_json(r.home_rf)},
                 {"rf_heldout",
                  {{"mlp_block",
                    {{"mape", r.home_rf_cv_block.mape()},
                     {"decode_mape", r.home_rf_cv_decode.mape()},
                     {"prefill_mape", r.home_rf_cv_prefill.mape()},
                     {"n", r.home_rf_cv_block.n},
                     {"folds", a.train.cv_folds}}}}},
                 {"analytical", slice_json(r.home_analytical)}};
    j["target"] = {{"gpu", r.target_gpu},
                   {"rows", r.target_rows},
                   {"rf_verbatim", slice_json(r.rf_verbatim)},
                   {"rf_scaled", slice_json(r.rf_scaled)},
                   {"rf_scaled_analytical", slice_json(r.rf_scaled_analytical)},
                   {"analytical", slice_json(r.analytical)}};
    j["ratios"] = {{"best_rf", best_name},
                   {"best_rf_over_analytical", an > 0 ? best / an : 0.0},
                   {"rf_verbatim_over_analytical", an > 0 ? r.rf_verbatim.block.mape() / an : 0.0},
                   {"rf_scaled_over_analytical", an > 0 ? r.rf_scaled.block.mape() / an : 0.0}};
    j["models"] = r.models;
    j["skipped"] = r.skipped;
    j["rf_training"] = {{"options", a.train.describe()},
                        {"tables", r.rf_tables},
                        {"cache_hits", r.rf_cache_hits},
                        {"seconds", r.rf_train_seconds}};
    j["notes"] =
        "MLP block = sum of a row's ops in mlp.csv (one layer); decode = num_tokens <= 128. "
        "attention.csv is not in this data: attention is not scored here. rf_scaled uses the "
        "branch-aware datasheet-roofline ratio; rf_scaled_analytical the analytical model's "
        "per-op ratio (a hybrid). No target row trains anything.";
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "Cross-GPU transfer: forests trained on {} only, scored on {}.\n"
      "Ground truth: Vidur mlp.csv medians. MLP block = sum of a row's ops (one layer); "
      "decode = tokens <= 128.\n"
      "No attention.csv in this data: attention is not part of these cells.\n"
      "Models: {}\nRF: {}\n",
      r.home_gpu, r.target_gpu, fmt::join(r.models, ", "), a.train.describe());
  if (!r.skipped.empty())
    out += fmt::format("Skipped (no home rows): {}\n", fmt::join(r.skipped, ", "));
  out += fmt::format("\n{:<8} {:<34} {:>6} {:>9} {:>9} {:>9} {:>11}\n", "GPU", "predictor", "n",
                     "block", "decode", "prefill", "best RF/x");
  auto line = [&out, best = best](const std::string& gpu, const std::string& name, int n,
                                  double block, double dec, double pre, bool ratio) {
    out += fmt::format(
        "{:<8} {:<34} {:>6} {:>8.2f}% {:>8.2f}% {:>8.2f}% {:>11}\n", gpu, name, n, block, dec, pre,
        ratio && block > 0 ? fmt::format("{:.2f}x", best / block) : std::string("-"));
  };
  auto slice_line = [&line](const std::string& gpu, const std::string& name, const Slice& s,
                            bool ratio) {
    line(gpu, name, s.block.n, s.block.mape(), s.decode_block.mape(), s.prefill_block.mape(),
         ratio);
  };
  slice_line(r.home_gpu, "rf (in-sample)", r.home_rf, false);
  line(r.home_gpu, fmt::format("rf ({}-fold held out)", a.train.cv_folds), r.home_rf_cv_block.n,
       r.home_rf_cv_block.mape(), r.home_rf_cv_decode.mape(), r.home_rf_cv_prefill.mape(), false);
  slice_line(r.home_gpu, "analytical", r.home_analytical, false);
  slice_line(r.target_gpu, "rf_verbatim", r.rf_verbatim, true);
  slice_line(r.target_gpu, "rf_scaled (datasheet roofline)", r.rf_scaled, true);
  slice_line(r.target_gpu, "rf_scaled_analytical (hybrid)", r.rf_scaled_analytical, true);
  slice_line(r.target_gpu, "analytical", r.analytical, true);
  out += fmt::format("best pure RF on {}: {} ({:.2f}%); analytical is {:.2f}x better\n",
                     r.target_gpu, best_name, best, an > 0 ? best / an : 0.0);
  out += fmt::format("\nPer-op MAPE on {} (home {} in-sample RF for reference)\n", r.target_gpu,
                     r.home_gpu);
  out += fmt::format("{:<26} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "op", "home rf", "verbatim",
                     "scaled", "hybrid", "analyt.");
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (r.rf_verbatim.ops[i].n == 0) continue;
    out += fmt::format("{:<26} {:>8.2f}% {:>8.2f}% {:>8.2f}% {:>8.2f}% {:>8.2f}%\n",
                       vidur_op_name(static_cast<VidurOp>(i)), r.home_rf.ops[i].mape(),
                       r.rf_verbatim.ops[i].mape(), r.rf_scaled.ops[i].mape(),
                       r.rf_scaled_analytical.ops[i].mape(), r.analytical.ops[i].mape());
  }
  out += fmt::format("\nRF tables: {} ({} from cache), {:.2f} s\n", r.rf_tables, r.rf_cache_hits,
                     r.rf_train_seconds);
  return out;
}

std::string run_ledger(const RfTransferArgs& args) {
  RfTransferArgs a = args;
  a.use_cache = false;  // calibration cost = cold training
  const TransferResult r = compute_transfer(a);
  Catalog catalog(Catalog::default_dirs());
  const int gpus = static_cast<int>(catalog.gpu_names().size());
  const int rows = r.home_rows;
  struct Entry {
    std::string method;
    std::string rows;
    double seconds;
    std::string coverage;
    double home;
    double transfer;
  };
  const std::vector<Entry> entries = {
      {"analytical", "0 (A100 constants fitted once, declared in hardware file)",
       r.analytical_seconds, fmt::format("{}/{} (any datasheet)", gpus, gpus),
       r.home_analytical.block.mape(), r.analytical.block.mape()},
      {"rf", std::to_string(rows), r.rf_train_seconds,
       fmt::format("1/{} (profiled GPU only)", gpus), r.home_rf.block.mape(),
       r.rf_verbatim.block.mape()},
      {"rf_scaled", std::to_string(rows), r.rf_train_seconds,
       fmt::format("{}/{} (any datasheet)", gpus, gpus), r.home_rf.block.mape(),
       r.rf_scaled.block.mape()},
  };
  if (a.json) {
    nlohmann::json j;
    for (const Entry& e : entries) {
      j["methods"][e.method] = {{"profiling_rows", e.rows},
                                {"calibration_seconds", e.seconds},
                                {"coverage", e.coverage},
                                {"home_mape", e.home},
                                {"transfer_mape", e.transfer}};
    }
    j["home"] = r.home_gpu;
    j["target"] = r.target_gpu;
    j["models"] = r.models;
    j["rf_heldout_home_mape"] = r.home_rf_cv_block.mape();
    j["notes"] =
        "MAPE of the MLP block (sum of a row's mlp.csv ops). rf calibration = cold training "
        "of every (model, TP) forest table scored (cache off); analytical calibration = wall "
        "time to price every row. rf home MAPE is in-sample; rf_heldout_home_mape is k-fold.";
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "Cost/coverage ledger, home {} -> target {}, models: {}\n"
      "MAPE = MLP block of mlp.csv rows; RF home MAPE in-sample (k-fold held out: {:.2f}%); "
      "calibration = cold training (no cache).\n\n",
      r.home_gpu, r.target_gpu, fmt::join(r.models, ", "), r.home_rf_cv_block.mape());
  out += fmt::format("{:<11} {:<58} {:>12} {:<26} {:>9} {:>13}\n", "method", "profiling rows",
                     "calibration", "GPUs covered", "home", "transfer");
  for (const Entry& e : entries) {
    out += fmt::format("{:<11} {:<58} {:>10.3f} s {:<26} {:>8.2f}% {:>12.2f}%\n", e.method, e.rows,
                       e.seconds, e.coverage, e.home, e.transfer);
  }
  return out;
}

}  // namespace servesim
