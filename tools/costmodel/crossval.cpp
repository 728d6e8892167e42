#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/cross_validation.hpp"
#include "sim/config/input_error.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;
namespace {

// The four projection GEMMs of a slice pooled.
ErrorStats gemm_stats(const ProfileValidation::Slice& s) {
  ErrorStats e;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (is_projection_gemm(static_cast<VidurOp>(i))) e.merge(s.ops[i]);
  }
  return e;
}

}  // namespace

std::string run_crossval(const CostmodelArgs& a) {
  Context c = load(a, true);
  const FitData d = read_fit_data(c);
  const std::size_t n = d.files.size();
  const std::vector<std::vector<std::size_t>> folds = gemm_shape_folds(d.files, d.models);
  if (folds.size() < 2) {
    throw InputError(fmt::format(
        "--profiles: leave-one-group-out needs two or more groups of models of {} that share no "
        "GEMM shape (found {} model{} in {} group)",
        c.gpu.name, n, n == 1 ? "" : "s", folds.size()));
  }
  std::vector<std::string> model_ids;
  for (const auto& [id, path] : c.profiles) model_ids.push_back(id);
  const CrossValidation v = cross_validate(d.files, d.models, model_ids, folds, c.gpu, c.params);
  const std::vector<ProfileValidation>& in = v.in_sample;
  const std::vector<ProfileValidation>& out = v.held_out;
  const std::vector<std::size_t>& fold_of = v.fold_of;
  const std::vector<std::vector<std::string>>& borrowed = v.kernels_as_sibling;
  const std::vector<std::vector<std::string>>& in_sample = v.kernels_in_sample;
  const std::vector<std::vector<std::string>>& from_file = v.kernels_from_hardware_file;
  ProfileValidation::Slice in_all;
  ProfileValidation::Slice out_all;
  for (std::size_t i = 0; i < n; ++i) {
    in_all.merge(in[i].slices.front());
    out_all.merge(out[i].slices.front());
  }
  auto pair_json = [](const ProfileValidation::Slice& si, const ProfileValidation::Slice& so) {
    return nlohmann::json{
        {"in_sample", {{"block_mape", si.block.mape()}, {"gemm_mape", gemm_stats(si).mape()}}},
        {"held_out",
         {{"block_mape", so.block.mape()},
          {"decode_mape", so.decode_block.mape()},
          {"prefill_mape", so.prefill_block.mape()},
          {"gemm_mape", gemm_stats(so).mape()},
          {"n", so.block.n}}}};
  };
  if (a.json) {
    nlohmann::json j = pair_json(in_all, out_all);
    c.stamp(j);
    j["not_in_catalog"] = uncataloged(c);
    j["groups"] = nlohmann::json::array();
    for (const auto& fold : folds) {
      nlohmann::json ids = nlohmann::json::array();
      for (const std::size_t i : fold) ids.push_back(c.profiles[i].first);
      j["groups"].push_back(ids);
    }
    for (std::size_t i = 0; i < n; ++i) {
      nlohmann::json m = pair_json(in[i].slices.front(), out[i].slices.front());
      m["group"] = fold_of[i] + 1;
      m["kernels_as_sibling"] = borrowed[i];
      m["kernels_in_sample"] = in_sample[i];
      m["kernels_from_hardware_file"] = from_file[i];
      j["models"][c.profiles[i].first] = m;
    }
    return j.dump(2) + "\n";
  }
  std::string text = fmt::format(
      "{} — leave-one-group-out: each model priced with the constants `costmodel fit` finds "
      "on the models outside its group (models sharing a GEMM shape are held out together)\n",
      c.title());
  for (std::size_t f = 0; f < folds.size(); ++f) {
    std::vector<std::string> ids;
    for (const std::size_t i : folds[f]) ids.push_back(c.profiles[i].first);
    text += fmt::format("  group {}: {}\n", f + 1, fmt::join(ids, ", "));
  }
  text += fmt::format("{:<44} {:>5} {:>16} {:>15} {:>8} {:>8} {:>12} {:>12}\n",
                      "model (MLP-block MAPE; GEMM = the four pooled)", "group", "in-sample block",
                      "held-out block", "decode", "prefill", "GEMM in", "GEMM out");
  auto line = [&text](const std::string& label, const std::string& group,
                      const ProfileValidation::Slice& si, const ProfileValidation::Slice& so) {
    text += fmt::format("{:<44} {:>5} {:15.2f}% {:14.2f}% {:7.2f}% {:7.2f}% {:11.2f}% {:11.2f}%\n",
                        label, group, si.block.mape(), so.block.mape(), so.decode_block.mape(),
                        so.prefill_block.mape(), gemm_stats(si).mape(), gemm_stats(so).mape());
  };
  for (std::size_t i = 0; i < n; ++i) {
    line(c.profiles[i].first, std::to_string(fold_of[i] + 1), in[i].slices.front(),
         out[i].slices.front());
  }
  line("ALL", "", in_all, out_all);
  for (std::size_t i = 0; i < n; ++i) {
    if (!borrowed[i].empty()) {
      text += fmt::format(
          "note: {} runs kernels no model outside its group runs, priced with a sibling's "
          "constants: {}\n",
          c.profiles[i].first, fmt::join(borrowed[i], ", "));
    }
    if (!in_sample[i].empty()) {
      text += fmt::format(
          "note: {} runs {} kernels no model outside its group runs and no sibling covers: "
          "priced with the fit on all models (in sample)\n",
          c.profiles[i].first, fmt::join(in_sample[i], ", "));
    }
    if (!from_file[i].empty()) {
      text += fmt::format(
          "note: {} runs {} kernels no profile here times: priced with the hardware file's "
          "constants\n",
          c.profiles[i].first, fmt::join(from_file[i], ", "));
    }
  }
  return text + uncataloged_text(c);
}

}  // namespace servesim
