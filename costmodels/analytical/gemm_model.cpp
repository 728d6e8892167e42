#include "costmodels/analytical/gemm_model.hpp"

#include <algorithm>
#include <cmath>

namespace servesim {

int cluster_capacity(const GpuSpec& gpu, int c) {
  if (c <= 1) return gpu.sms;
  if (gpu.gpc_sms.empty()) return std::max(c, gpu.sms / c * c);
  int cap = 0;
  for (int s : gpu.gpc_sms) cap += s / c * c;
  return std::max(c, cap);
}

GemmLaunch plan_gemm(const GemmShape& g, const GpuSpec& gpu, const AnalyticalParams& p,
                     bool use_wave, bool use_split_k) {
  GemmLaunch best;
  if (!use_wave) return best;
  const double sms = gpu.sms;
  double cap = sms * p.ctas_per_sm;
  if (p.launch_model == LaunchModel::kPersistent) cap = sms;
  if (p.launch_model == LaunchModel::kCluster) cap = cluster_capacity(gpu, p.cluster_size);
  const double useful = g.m * g.n * g.count;
  best.eta_wave = -1;
  for (const auto& [tm, tn] : p.tiles) {
    const double tiles = std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.count;
    int split = 1;
    if (use_split_k) {
      while (tiles * split * 2 <= cap && g.k / (split * 2) >= p.split_k_min_k) split *= 2;
    }
    const double work = tiles * split;
    double eta = 0;
    double launched = 0;
    if (p.launch_model == LaunchModel::kGrid) {
      const double waves = std::ceil(work / cap);
      launched = std::min(work, cap);
      eta = useful * split / (waves * cap * tm * tn);
    } else {
      launched = std::min(work, cap);
      const double waves = std::ceil(work / launched);
      eta = useful * split / (waves * sms * tm * tn);
    }
    if (eta > best.eta_wave + 1e-12) {
      best = {tm, tn, tiles, launched, split, eta};
    }
  }
  best.eta_wave = std::min(1.0, best.eta_wave);
  return best;
}

double eta_mem(double ws, double l2, const AnalyticalParams& p) {
  const double x = ws / l2;
  return p.eta_max * x / (x + p.x_half);
}

double gemm_ns(const GemmShape& g, double wbytes, double flops_per_ns, double f_clk,
               const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms,
               double launch_scale) {
  const GemmLaunch plan = plan_gemm(g, gpu, p, terms.wave, terms.split_k);
  const double eff = terms.efficiency ? p.gemm_efficiency * f_clk : 1.0;
  const double flops = 2 * g.m * g.k * g.n * g.count;
  const double t_c = flops / (flops_per_ns * eff * plan.eta_wave);
  double bytes = ((g.m * g.k + g.m * g.n) * 2 + g.k * g.n * wbytes) * g.count;
  if (plan.split_k > 1) bytes += 2 * 4 * g.m * g.n * g.count * plan.split_k;  // fp32 partials
  const double bw = gpu.memory_bw_gb_per_s;                                   // bytes per ns
  double t_m = bytes / bw;
  if (terms.l2_law) t_m = (bytes + p.x_half * gpu.l2_mb * 1048576.0) / (p.eta_max * bw);
  double t = std::max(t_c, t_m);
  if (terms.knee) t = std::pow(std::pow(t_c, p.knee_q) + std::pow(t_m, p.knee_q), 1 / p.knee_q);
  if (terms.launch) t += p.gemm_launch_ns * launch_scale;
  return t;
}

}  // namespace servesim
