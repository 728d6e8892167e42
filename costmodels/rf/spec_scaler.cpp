#include "costmodels/rf/spec_scaler.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "costmodels/analytical/analytical_terms.hpp"

namespace servesim {
namespace {

ReplicaSpec replica_of(const GpuSpec& gpu, const ModelSpec& model, int tp) {
  ReplicaSpec r;
  r.gpu = &gpu;
  r.model = &model;
  r.tp = tp;
  r.cuda_graphs = false;  // Vidur profiles eager kernels
  return r;
}

double link_gb_per_s(const GpuSpec& g) {
  return g.nvlink_gb_per_s > 0 ? g.nvlink_gb_per_s : g.pcie_gb_per_s;
}

}  // namespace

SpecScaler::SpecScaler(const GpuSpec& home, const GpuSpec& target, const ModelSpec& model, int tp,
                       Mode mode)
    : mode_(mode),
      shapes_(LayerShapes::make(model, tp)),
      peak_home_(home.bf16_flop_per_ns()),
      peak_target_(target.bf16_flop_per_ns()),
      bw_home_(home.memory_bw_gb_per_s),
      bw_target_(target.memory_bw_gb_per_s) {
  const double lh = link_gb_per_s(home);
  const double lt = link_gb_per_s(target);
  collective_ratio_ = lh > 0 && lt > 0 ? lh / lt : 1.0;
  if (mode == Mode::kAnalytical) {
    home_pricer_.emplace(replica_of(home, model, tp), AnalyticalParams::for_gpu(home),
                         AnalyticalTerms{});
    target_pricer_.emplace(replica_of(target, model, tp), AnalyticalParams::for_gpu(target),
                           AnalyticalTerms{});
  }
}

double SpecScaler::roofline_ratio(VidurOp op, double tokens) const {
  const double mem = bw_home_ / bw_target_;
  ProjOp proj = ProjOp::kQkv;
  switch (op) {
    case VidurOp::kAttnPreProj:
      proj = ProjOp::kQkv;
      break;
    case VidurOp::kAttnPostProj:
      proj = ProjOp::kO;
      break;
    case VidurOp::kMlpUpProj:
      proj = ProjOp::kGateUp;
      break;
    case VidurOp::kMlpDownProj:
      proj = ProjOp::kDown;
      break;
    default:
      return mem;  // light kernels and the embedding stream memory
  }
  // Roofline times of one GEMM on either GPU; for an interleaved MoE model the layer-weighted
  // mix of the expert and the dense MLP GEMM.
  auto times = [&](const GemmShape& g) {
    const double flops = g.flops();
    const double bytes = 2 * (g.m * g.k + g.k * g.n + g.m * g.n) * g.count;  // BF16 A, B, C
    return std::pair{std::max(flops / peak_home_, bytes / bw_home_),
                     std::max(flops / peak_target_, bytes / bw_target_)};
  };
  auto [home, target] = times(shapes_.expert_gemm(proj, tokens));
  if (shapes_.interleaved() && (proj == ProjOp::kGateUp || proj == ProjOp::kDown)) {
    const auto [dh, dt] = times(shapes_.dense_mlp_gemm(proj, tokens));
    home = shapes_.mean_layer(home, dh);
    target = shapes_.mean_layer(target, dt);
  }
  return target / home;
}

double SpecScaler::ratio(VidurOp op, double tokens) const {
  if (mode_ == Mode::kRoofline) return roofline_ratio(op, tokens);
  return ratios(tokens)[static_cast<std::size_t>(op)];
}

std::array<double, kNumVidurOps> SpecScaler::ratios(double tokens) const {
  std::array<double, kNumVidurOps> r{};
  if (mode_ == Mode::kRoofline) {
    for (std::size_t i = 0; i < kNumVidurOps; ++i)
      r[i] = roofline_ratio(static_cast<VidurOp>(i), tokens);
    return r;
  }
  const auto h = home_pricer_->vidur_ops_ns(tokens);
  const auto t = target_pricer_->vidur_ops_ns(tokens);
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    // An op the analytical model lacks (NaN) falls back to the datasheet roofline ratio.
    r[i] = h[i] > 0 && std::isfinite(t[i]) ? t[i] / h[i]
                                           : roofline_ratio(static_cast<VidurOp>(i), tokens);
  }
  return r;
}

}  // namespace servesim
