#include "costmodels/analytical/cross_validation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/layer_shapes.hpp"

namespace servesim {
namespace {

// The kernel whose constants price `k` when no training model runs `k`: the kernel of the same
// structure (one CTA per token row): LayerNorm as RMSNorm, GELU as SiLU-and-mul; none else.
std::optional<LightKernel> sibling_kernel(LightKernel k) {
  if (k == LightKernel::kLayerNorm) return LightKernel::kRmsNorm;
  if (k == LightKernel::kGelu) return LightKernel::kSiluMul;
  return std::nullopt;
}

// The light kernels `model` runs in Vidur's ops.
std::vector<LightKernel> light_kernels_of(const ModelSpec& model, const VidurMlpRow& row,
                                          const GpuSpec& gpu, const AnalyticalParams& params) {
  ReplicaSpec r;
  r.gpu = &gpu;
  r.model = &model;
  r.tp = row.tp;
  std::vector<LightKernel> out;
  for (const auto& u : LayerPricer(r, params, {}).vidur_light_uses(row.num_tokens)) {
    if (u.count > 0 && std::find(out.begin(), out.end(), u.kernel) == out.end()) {
      out.push_back(u.kernel);
    }
  }
  return out;
}
}  // namespace

std::vector<std::vector<std::size_t>> gemm_shape_folds(const ProfileFiles& files,
                                                       const std::vector<ModelSpec>& models) {
  const std::size_t n = files.size();
  std::vector<std::size_t> group(n);
  for (std::size_t i = 0; i < n; ++i) group[i] = i;
  using Gemm = std::array<long long, 3>;  // M, K, N
  std::map<Gemm, std::size_t> owner;      // GEMM -> first model timing it
  for (std::size_t i = 0; i < n; ++i) {
    for (const VidurMlpRow& row : files[i].second) {
      const LayerShapes s = LayerShapes::make(models[i], row.tp);
      for (std::size_t op = 0; op < kNumProjOps; ++op) {
        const GemmShape g = s.gemm(static_cast<ProjOp>(op), row.num_tokens);
        const auto [it, fresh] =
            owner.emplace(Gemm{std::llround(g.m), std::llround(g.k), std::llround(g.n)}, i);
        if (fresh) continue;
        // Merge the two groups (relabel the later one).
        const std::size_t from = std::max(group[i], group[it->second]);
        const std::size_t to = std::min(group[i], group[it->second]);
        for (std::size_t& label : group) {
          if (label == from) label = to;
        }
      }
    }
  }
  std::vector<std::vector<std::size_t>> folds;
  std::map<std::size_t, std::size_t> fold_of_group;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = fold_of_group.emplace(group[i], folds.size());
    if (fresh) folds.emplace_back();
    folds[it->second].push_back(i);
  }
  return folds;
}

CrossValidation cross_validate(const ProfileFiles& files, const std::vector<ModelSpec>& models,
                               const std::vector<std::string>& ids,
                               std::vector<std::vector<std::size_t>> folds, const GpuSpec& gpu,
                               const AnalyticalParams& params) {
  const FitReport all_report = fit_home_constants(files, models, gpu, params);
  const AnalyticalParams& all_fit = all_report.params;
  // Fold f is fitted on every other fold's files.
  const std::size_t n = files.size();
  CrossValidation r;
  r.folds = std::move(folds);
  r.fold_of.resize(n);
  r.in_sample.resize(n);
  r.held_out.resize(n);
  r.kernels_as_sibling.resize(n);
  r.kernels_in_sample.resize(n);
  r.kernels_from_hardware_file.resize(n);
  tbb::parallel_for(std::size_t{0}, r.folds.size(), [&](std::size_t f) {
    ProfileFiles rest_files;
    std::vector<ModelSpec> rest_models;
    for (std::size_t j = 0; j < n; ++j) {
      if (std::find(r.folds[f].begin(), r.folds[f].end(), j) != r.folds[f].end()) continue;
      rest_files.push_back(files[j]);
      rest_models.push_back(models[j]);
    }
    const FitReport held = fit_home_constants(rest_files, rest_models, gpu, params);
    for (const std::size_t i : r.folds[f]) {
      r.fold_of[i] = f;
      // A kernel no training model runs would keep the start constants (on the home GPU fitted
      // on this model too): price it as its sibling where the training fitted that.
      AnalyticalParams p = held.params;
      for (const LightKernel k :
           light_kernels_of(models[i], files[i].second.front(), gpu, params)) {
        if (held.refit(k)) continue;
        const auto sib = sibling_kernel(k);
        if (sib && held.refit(*sib)) {
          p.light[static_cast<std::size_t>(k)] = p.light[static_cast<std::size_t>(*sib)];
          r.kernels_as_sibling[i].push_back(
              fmt::format("{} as {}", light_kernel_name(k), light_kernel_name(*sib)));
        } else if (all_report.refit(k)) {
          p.light[static_cast<std::size_t>(k)] = all_fit.light[static_cast<std::size_t>(k)];
          r.kernels_in_sample[i].emplace_back(light_kernel_name(k));
        } else {
          r.kernels_from_hardware_file[i].emplace_back(light_kernel_name(k));
        }
      }
      const std::string& id = ids[i];
      r.in_sample[i] = validate_profile(files[i].second, id, gpu, &models[i], all_fit, {});
      r.held_out[i] = validate_profile(files[i].second, id, gpu, &models[i], p, {});
    }
  });
  return r;
}

}  // namespace servesim
