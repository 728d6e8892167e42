#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tools/costmodel/transfer_study.hpp"

namespace servesim {
namespace {

using Slice = ProfileValidation::Slice;

nlohmann::json transfer_slice_json(const Slice& s) {
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

std::string run_transfer(const RfTransferArgs& a) {
  const TransferResult r = compute_transfer(a);
  const auto [best, best_name] = best_rf(r);
  const double an = r.analytical.block.mape();
  if (a.json) {
    nlohmann::json j;
    j["home"] = {{"gpu", r.home_gpu},
                 {"rows", r.home_rows},
                 {"rf", transfer_slice_json(r.home_rf)},
                 {"rf_heldout",
                  {{"mlp_block",
                    {{"mape", r.home_rf_cv_block.mape()},
                     {"decode_mape", r.home_rf_cv_decode.mape()},
                     {"prefill_mape", r.home_rf_cv_prefill.mape()},
                     {"n", r.home_rf_cv_block.n},
                     {"folds", a.train.cv_folds}}}}},
                 {"analytical", transfer_slice_json(r.home_analytical)}};
    j["target"] = {{"gpu", r.target_gpu},
                   {"rows", r.target_rows},
                   {"rf_verbatim", transfer_slice_json(r.rf_verbatim)},
                   {"rf_scaled", transfer_slice_json(r.rf_scaled)},
                   {"rf_scaled_analytical", transfer_slice_json(r.rf_scaled_analytical)},
                   {"analytical", transfer_slice_json(r.analytical)}};
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

}  // namespace servesim
