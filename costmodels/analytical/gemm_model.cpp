#include "costmodels/analytical/gemm_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

int ctas_per_sm_for(int tm, int tn, const AnalyticalParams& p) {
  if (p.accumulator_budget <= 0) return p.ctas_per_sm;
  const int fit = static_cast<int>(p.accumulator_budget / (double(tm) * tn));
  return std::clamp(fit, 1, std::max(1, p.ctas_per_sm));
}

GridRounds grid_rounds(double work, double sms, int c, const AnalyticalParams& p) {
  const double full = std::floor(work / (c * sms));
  const double rest = work - full * c * sms;
  const double k = std::ceil(rest / sms);  // CTAs on the busiest SM of the last round
  GridRounds r;
  r.waves = full + (rest > 0 ? 1 : 0);
  r.sm_units = full * c;
  if (rest > 0) {
    double tail = c;
    if (p.lone_cta_utilization > 0 && k < c) {
      const double u =
          c == 1 ? 1.0 : p.lone_cta_utilization + (1 - p.lone_cta_utilization) * (k - 1) / (c - 1);
      tail = std::min<double>(c, k / u);
    }
    r.sm_units += tail;
  }
  return r;
}

std::vector<GemmCandidate> gemm_candidates(const GemmShape& g, double wbytes, const GpuSpec& gpu,
                                           const AnalyticalParams& p, bool use_wave,
                                           bool use_split_k) {
  std::vector<GemmCandidate> out;
  const double base = g.bytes(wbytes);
  if (!use_wave) {
    out.push_back({GemmLaunch{}, 1, base});
    return out;
  }
  const double sms = gpu.sms;
  double cap = sms * p.ctas_per_sm;
  if (p.launch_model == LaunchModel::kPersistent) cap = sms;
  if (p.launch_model == LaunchModel::kCluster) cap = cluster_capacity(gpu, p.cluster_size);
  const double useful = g.m * g.n * g.count;
  for (const auto& [tm, tn] : p.tiles) {
    const double tiles = std::ceil(g.m / tm) * std::ceil(g.n / tn) * g.count;
    const int c = ctas_per_sm_for(tm, tn, p);
    const double slots = p.launch_model == LaunchModel::kGrid ? sms * c : cap;
    for (int split = 1;; split *= 2) {
      if (split > 1 && (!use_split_k || tiles * split > slots || g.k / split < p.split_k_min_k)) {
        break;
      }
      const double work = tiles * split;
      const double launched = std::min(work, slots);
      double waves = 0;
      double eta = 0;
      if (p.launch_model == LaunchModel::kGrid) {
        const GridRounds r = grid_rounds(work, sms, c, p);
        waves = r.waves;
        eta = useful * split / (r.sm_units * sms * tm * tn);
      } else {
        waves = std::ceil(work / launched);
        eta = useful * split / (waves * sms * tm * tn);
      }
      double bytes = base;
      if (split > 1) bytes += 2 * 4 * g.m * g.n * g.count * split;  // fp32 partials
      out.push_back({GemmLaunch{tm, tn, tiles, launched, split, std::min(1.0, eta)}, waves, bytes});
    }
  }
  return out;
}

double candidate_ns(const GemmShape& g, const GemmCandidate& c, double flops_per_ns_eff,
                    const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms) {
  const double flops = g.flops();
  double t_c = flops / (flops_per_ns_eff * c.launch.eta_wave);
  if (terms.wave) t_c += c.waves * p.wave_ns;
  const double bw = gpu.memory_bw_gb_per_s;  // bytes per ns
  double t_m = c.bytes / bw;
  if (terms.l2_law) t_m = (c.bytes + p.x_half * gpu.l2_bytes()) / (p.eta_max * bw);
  if (!terms.knee) return std::max(t_c, t_m);
  return knee_ns(t_c, t_m, p.knee_q);
}

double knee_ns(double a, double b, double q) {
  if (q == 3) return std::cbrt(a * a * a + b * b * b);
  return std::pow(std::pow(a, q) + std::pow(b, q), 1 / q);
}

double gemm_ns(const GemmShape& g, double wbytes, double flops_per_ns, double f_clk,
               const GpuSpec& gpu, const AnalyticalParams& p, const AnalyticalTerms& terms,
               double launch_scale) {
  const double eff = terms.efficiency ? p.gemm_efficiency * f_clk : 1.0;
  double best = std::numeric_limits<double>::infinity();
  for (const GemmCandidate& c : gemm_candidates(g, wbytes, gpu, p, terms.wave, terms.split_k)) {
    best = std::min(best, candidate_ns(g, c, flops_per_ns * eff, gpu, p, terms));
  }
  if (terms.launch) best += p.gemm_launch_ns * launch_scale;
  return best;
}

KernelClock gemm_under_cap(const GemmShape& g, double wbytes, double flops_per_ns, double f_clk,
                           const PowerModel& pm, double cap_w, const GpuSpec& gpu,
                           const AnalyticalParams& p, const AnalyticalTerms& terms,
                           double launch_scale) {
  return under_cap(pm, gpu, cap_w, f_clk, g.flops(), flops_per_ns, g.bytes(wbytes), [&](double x) {
    return gemm_ns(g, wbytes, flops_per_ns, x, gpu, p, terms, launch_scale);
  });
}

}  // namespace servesim
