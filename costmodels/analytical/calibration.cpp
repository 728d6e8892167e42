#include "costmodels/analytical/calibration.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "costmodels/analytical/collective_model.hpp"
#include "costmodels/analytical/gemm_model.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "sim/input_error.hpp"
#include "sim/replica_spec.hpp"

namespace servesim {
namespace fs = std::filesystem;
namespace {

// Relative-error least squares: minimise Σ ((X_i·β − y_i) / y_i)².
Eigen::VectorXd relative_lsq(const std::vector<std::vector<double>>& x,
                             const std::vector<double>& y) {
  const auto n = static_cast<Eigen::Index>(y.size());
  const auto k = static_cast<Eigen::Index>(x.front().size());
  Eigen::MatrixXd a(n, k);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < k; ++j) {
      a(i, j) = x[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] /
                y[static_cast<std::size_t>(i)];
    }
  }
  return a.colPivHouseholderQr().solve(b);
}

std::string rows_note(const std::map<std::string, int>& files) {
  std::string s;
  for (const auto& [f, n] : files) s += (s.empty() ? "" : ", ") + fmt::format("{} ({} rows)", f, n);
  return s;
}

std::string short_path(const std::string& p) {
  const auto pos = p.find("profiling/");
  return pos == std::string::npos ? p : p.substr(pos);
}

ReplicaSpec replica(const GpuSpec& gpu, const ModelSpec& model, int tp) {
  ReplicaSpec r;
  r.gpu = &gpu;
  r.model = &model;
  r.tp = tp;
  return r;
}

}  // namespace

void FitReport::merge(const FitReport& later) {
  params = later.params;
  yaml_fitted.insert(yaml_fitted.end(), later.yaml_fitted.begin(), later.yaml_fitted.end());
  text += later.text;
}

FitReport fit_home_constants(
    const std::vector<std::pair<std::string, std::vector<VidurMlpRow>>>& data,
    const std::vector<ModelSpec>& models, const GpuSpec& gpu, const AnalyticalParams& start) {
  FitReport rep;
  rep.params = start;
  const AnalyticalTerms terms;
  const double bw = gpu.memory_bw_gb_per_s;

  // Light kernels: per kernel kind, t/count = floor + bytes / (fraction · BW).
  std::map<LightKernel, std::vector<std::vector<double>>> lx;
  std::map<LightKernel, std::vector<double>> ly;
  std::map<LightKernel, std::map<std::string, int>> lfiles;
  for (std::size_t f = 0; f < data.size(); ++f) {
    std::map<int, LayerPricer> pricers;
    for (const VidurMlpRow& row : data[f].second) {
      auto it = pricers.find(row.tp);
      if (it == pricers.end()) {
        it = pricers.emplace(row.tp, LayerPricer(replica(gpu, models[f], row.tp), start, terms))
                 .first;
      }
      const auto uses = it->second.vidur_light_uses(row.num_tokens);
      for (std::size_t i = 0; i < kNumVidurOps; ++i) {
        const double t = row.ms[i] * 1e6;
        if (uses[i].count <= 0 || !(t > 0)) continue;
        lx[uses[i].kernel].push_back({1.0, uses[i].bytes});
        ly[uses[i].kernel].push_back(t / uses[i].count);
        ++lfiles[uses[i].kernel][short_path(data[f].first)];
      }
    }
  }
  rep.text += fmt::format("Fitted on {} (home profile), {} files\n", gpu.name, data.size());
  for (const auto& [k, x] : lx) {
    if (x.size() < 4) continue;
    const Eigen::VectorXd beta = relative_lsq(x, ly[k]);
    auto& l = rep.params.light[static_cast<std::size_t>(k)];
    l.floor_ns = std::max(0.0, beta(0));
    l.bw_fraction = beta(1) > 0 ? 1.0 / (beta(1) * bw) : 1.0;
    rep.text += fmt::format("  light {:<10} floor {:8.0f} ns  bw_fraction {:.3f}  ({} rows)\n",
                            light_kernel_name(k), l.floor_ns, l.bw_fraction, x.size());
    rep.yaml_fitted.push_back(fmt::format(
        "light.{}: {{floor_ns: {:.0f}, bw_fraction: {:.4f}, rows: {}, method: relative least "
        "squares t = floor + bytes/(fraction*BW), from: \"{}\"}}",
        light_kernel_name(k), l.floor_ns, l.bw_fraction, x.size(), rows_note(lfiles[k])));
  }

  // GEMMs: per row, the compute time at efficiency 1 and the memory time (both fixed given the
  // launch plan), then a grid over (efficiency, launch floor) minimising the MAPE.
  struct GemmRow {
    double tc1, tm, meas, m, bytes;
  };
  std::vector<GemmRow> g;
  std::map<std::string, int> gfiles;
  const double peak = gpu.bf16_tflops * 1e3;
  AnalyticalTerms no_launch;
  no_launch.launch = false;
  for (std::size_t f = 0; f < data.size(); ++f) {
    const LayerShapes shapes0 = LayerShapes::make(models[f], 1);
    (void)shapes0;
    for (const VidurMlpRow& row : data[f].second) {
      const LayerShapes s = LayerShapes::make(models[f], row.tp);
      const VidurOp ops[] = {VidurOp::kAttnPreProj, VidurOp::kAttnPostProj, VidurOp::kMlpUpProj,
                             VidurOp::kMlpDownProj};
      for (std::size_t j = 0; j < 4; ++j) {
        const double meas = row.ms[static_cast<std::size_t>(ops[j])] * 1e6;
        if (!(meas > 0)) continue;
        const GemmShape shape = s.gemm(static_cast<ProjOp>(j), row.num_tokens);
        AnalyticalParams p1 = start;
        p1.gemm_efficiency = 1;
        p1.clock_fraction = 1;
        const GemmLaunch plan = plan_gemm(shape, gpu, p1, true, true);
        const double tc1 = 2 * shape.m * shape.k * shape.n * shape.count / (peak * plan.eta_wave);
        double bytes =
            ((shape.m * shape.k + shape.m * shape.n) * 2 + shape.k * shape.n * 2) * shape.count;
        if (plan.split_k > 1) bytes += 8 * shape.m * shape.n * shape.count * plan.split_k;
        const double tm = (bytes + start.x_half * gpu.l2_mb * 1048576.0) / (start.eta_max * bw);
        g.push_back({tc1, tm, meas, shape.m, bytes});
        ++gfiles[short_path(data[f].first)];
      }
    }
  }
  // Memory branch first: decode-shaped rows (M ≤ 16) are memory-bound, t = a + bytes·b, which
  // is the L2 law's identity t = (bytes + x_half·L2) / (eta_max·BW).
  {
    std::vector<std::vector<double>> mx;
    std::vector<double> my;
    for (const GemmRow& r : g) {
      if (r.m > 16) continue;
      mx.push_back({1.0, r.bytes});
      my.push_back(r.meas);
    }
    if (mx.size() >= 4) {
      const Eigen::VectorXd beta = relative_lsq(mx, my);
      if (beta(1) > 0 && beta(0) > 0) {
        rep.params.eta_max = 1 / (beta(1) * bw);
        rep.params.x_half = beta(0) * rep.params.eta_max * bw / (gpu.l2_mb * 1048576.0);
      }
      rep.text += fmt::format("  memory  eta_max {:.4f}  x_half {:.4f}  ({} rows with M ≤ 16)\n",
                              rep.params.eta_max, rep.params.x_half, mx.size());
      rep.yaml_fitted.push_back(fmt::format(
          "memory: {{eta_max: {:.4f}, x_half: {:.4f}, rows: {}, method: relative least squares "
          "t = (bytes + x_half*L2)/(eta_max*BW) on GEMM rows with M <= 16, from: \"{}\"}}",
          rep.params.eta_max, rep.params.x_half, mx.size(), rows_note(gfiles)));
    }
    for (GemmRow& r : g) {
      r.tm = (r.bytes + rep.params.x_half * gpu.l2_mb * 1048576.0) / (rep.params.eta_max * bw);
    }
  }
  const double q = start.knee_q;
  auto mape = [&](double eff, double launch) {
    double s = 0;
    for (const GemmRow& r : g) {
      const double tc = r.tc1 / eff;
      const double t = std::pow(std::pow(tc, q) + std::pow(r.tm, q), 1 / q) + launch;
      s += std::abs(t - r.meas) / r.meas;
    }
    return 100 * s / static_cast<double>(g.size());
  };
  double best_e = start.gemm_efficiency * start.clock_fraction;
  double best_l = start.gemm_launch_ns;
  if (!g.empty()) {
    double best = std::numeric_limits<double>::infinity();
    double e_lo = 0.40, e_hi = 1.0, l_lo = 0, l_hi = 10000;
    for (int pass = 0; pass < 3; ++pass) {
      const double de = (e_hi - e_lo) / 24, dl = (l_hi - l_lo) / 20;
      for (double e = e_lo; e <= e_hi + 1e-12; e += de) {
        for (double l = l_lo; l <= l_hi + 1e-9; l += dl) {
          const double m = mape(e, l);
          if (m < best) best = m, best_e = e, best_l = l;
        }
      }
      e_lo = std::max(0.05, best_e - 2 * de), e_hi = best_e + 2 * de;
      l_lo = std::max(0.0, best_l - 2 * dl), l_hi = best_l + 2 * dl;
    }
    rep.params.gemm_efficiency = best_e / start.clock_fraction;
    rep.params.gemm_launch_ns = best_l;
    rep.text += fmt::format(
        "  gemm efficiency {:.4f} (×clock_fraction {:.3f})  launch {:.0f} ns  "
        "GEMM MAPE {:.2f}% ({} rows)\n",
        rep.params.gemm_efficiency, start.clock_fraction, best_l, best, g.size());
    rep.yaml_fitted.push_back(fmt::format(
        "gemm: {{efficiency: {:.4f}, launch_ns: {:.0f}, rows: {}, method: grid search minimising "
        "the MAPE of the qkv/o/gate_up/down GEMMs with every other term on, from: \"{}\"}}",
        rep.params.gemm_efficiency, best_l, g.size(), rows_note(gfiles)));
  }
  return rep;
}

namespace {

struct NetFile {
  std::string path;
  std::string topology;
};

std::vector<NetFile> network_files(const std::string& dir, const GpuSpec& gpu) {
  std::vector<NetFile> out;
  std::vector<std::string> stems = {gpu.name};
  for (const auto& a : gpu.aliases) stems.push_back(a);
  for (std::string stem : stems) {
    for (char& c : stem) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& [suffix, topo] : {std::pair<std::string, std::string>{"_dgx", "nvlink"},
                                       {"_pairwise_nvlink", "pairwise_nvlink"}}) {
      const fs::path p = fs::path(dir) / (stem + suffix) / "all_reduce.csv";
      if (fs::is_regular_file(p)) out.push_back({p.string(), topo});
    }
    if (!out.empty()) break;
  }
  if (out.empty()) {
    throw InputError("--profiles: no <gpu>_dgx or <gpu>_pairwise_nvlink all_reduce.csv for '" +
                     gpu.name + "' under " + dir);
  }
  return out;
}

}  // namespace

NetworkValidation validate_network(const std::string& dir, const GpuSpec& gpu,
                                   const AnalyticalParams& params) {
  NetworkValidation v;
  for (const NetFile& f : network_files(dir, gpu)) {
    std::map<int, NetworkValidation::Slice> by_p;
    for (const VidurNetworkRow& r : read_vidur_network(f.path, "all_reduce")) {
      if (r.devices_per_node != r.num_workers) continue;  // multi-node rows: not modelled
      const TpTopology topo(r.num_workers, f.topology, gpu, params);
      auto& s = by_p[r.num_workers];
      s.file = short_path(f.path);
      s.topology = f.topology;
      s.workers = r.num_workers;
      s.stats.add(topo.all_reduce_ns(r.size_bytes), r.ms * 1e6);
    }
    for (auto& [p, s] : by_p) v.slices.push_back(s);
  }
  return v;
}

FitReport fit_network_constants(const std::string& dir, const GpuSpec& gpu,
                                const AnalyticalParams& start) {
  FitReport rep;
  rep.params = start;
  // t = 2(p−1)/p · S / (link_bw · η_link) + 2(p−1)·lat: linear in 1/η_nvlink, 1/η_pcie, lat.
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  std::map<std::string, int> files;
  AnalyticalParams unit = start;
  unit.nvlink_efficiency = 1;
  unit.pcie_efficiency = 1;
  for (const NetFile& f : network_files(dir, gpu)) {
    for (const VidurNetworkRow& r : read_vidur_network(f.path, "all_reduce")) {
      if (r.devices_per_node != r.num_workers) continue;
      const double p = r.num_workers;
      const TpTopology topo(r.num_workers, f.topology, gpu, unit);
      const double bw = topo.ring_bottleneck_bytes_per_ns();
      const bool nv = std::abs(bw - gpu.nvlink_gb_per_s / 2) < 1e-9;
      const double xfer = 2 * (p - 1) / p * r.size_bytes / bw;
      x.push_back({nv ? xfer : 0.0, nv ? 0.0 : xfer, 2 * (p - 1)});
      y.push_back(r.ms * 1e6);
      ++files[short_path(f.path)];
    }
  }
  if (x.size() < 3) return rep;
  const Eigen::VectorXd beta = relative_lsq(x, y);
  if (beta(0) > 0) rep.params.nvlink_efficiency = 1 / beta(0);
  if (beta(1) > 0) rep.params.pcie_efficiency = 1 / beta(1);
  rep.params.hop_latency_ns = std::max(0.0, beta(2));
  rep.text += fmt::format(
      "  all-reduce nvlink_efficiency {:.3f}  pcie_efficiency {:.3f}  "
      "hop_latency {:.0f} ns  ({} single-node rows)\n",
      rep.params.nvlink_efficiency, rep.params.pcie_efficiency, rep.params.hop_latency_ns,
      y.size());
  rep.yaml_fitted.push_back(fmt::format(
      "collectives: {{nvlink_efficiency: {:.4f}, pcie_efficiency: {:.4f}, hop_latency_ns: {:.0f}, "
      "rows: {}, method: relative least squares of the ring formula on single-node rows, from: "
      "\"{}\"}}",
      rep.params.nvlink_efficiency, rep.params.pcie_efficiency, rep.params.hop_latency_ns, y.size(),
      rows_note(files)));
  return rep;
}

std::string analytical_section_yaml(const AnalyticalParams& p,
                                    const std::vector<std::string>& fitted) {
  std::string s = "analytical:\n";
  s +=
      "  source: |\n"
      "    Written by `costmodel fit` (see fitted: for each fitted constant, its method and the\n"
      "    profile rows used). Not fitted here: attention (prefill_efficiency: FlashAttention-2\n"
      "    forward reaches 50-73% of A100 peak, Dao 2023; decode_bw_fraction and floor_ns:\n"
      "    UNCALIBRATED, no attention profile in data/), light.kv_write (seed E1.1c, A100-80 ncu:\n"
      "    7.7 us floor, 0.22 of BW), light.sampling (UNCALIBRATED), graph_launch_scale (public\n"
      "    launch costs ~2.5 us eager vs ~1.3 us in a CUDA graph, PHYSICS 4), tiles (the\n"
      "    cuBLAS/CUTLASS SM80 ladder, PHYSICS 2a), knee_q and split_k_min_k (PHYSICS 9).\n";
  const char* lm = p.launch_model == LaunchModel::kGrid         ? "grid"
                   : p.launch_model == LaunchModel::kPersistent ? "persistent"
                                                                : "cluster";
  std::string tiles;
  for (const auto& [m, n] : p.tiles)
    tiles += fmt::format("{}[{}, {}]", tiles.empty() ? "" : ", ", m, n);
  s += fmt::format(
      "  gemm:\n    efficiency: {:.4f}\n    clock_fraction: {:.4f}\n"
      "    launch_ns: {:.0f}\n    launch_model: {}\n    cluster_size: {}\n"
      "    ctas_per_sm: {}\n    tiles: [{}]\n    split_k_min_k: {}\n"
      "    knee_q: {:g}\n",
      p.gemm_efficiency, p.clock_fraction, p.gemm_launch_ns, lm, p.cluster_size, p.ctas_per_sm,
      tiles, p.split_k_min_k, p.knee_q);
  s += fmt::format("  memory:\n    eta_max: {:g}\n    x_half: {:g}\n", p.eta_max, p.x_half);
  s += fmt::format(
      "  attention:\n    prefill_efficiency: {:g}\n    decode_bw_fraction: {:g}\n"
      "    floor_ns: {:.0f}\n",
      p.prefill_attn_efficiency, p.decode_attn_bw_fraction, p.attn_floor_ns);
  s += fmt::format("  light:\n    graph_launch_scale: {:g}\n", p.graph_launch_scale);
  for (std::size_t i = 0; i < kNumLightKernels; ++i) {
    s += fmt::format("    {}: {{floor_ns: {:.0f}, bw_fraction: {:.4f}}}\n",
                     light_kernel_name(static_cast<LightKernel>(i)), p.light[i].floor_ns,
                     p.light[i].bw_fraction);
  }
  s += fmt::format(
      "  collectives:\n    nvlink_efficiency: {:.4f}\n    pcie_efficiency: {:.4f}\n"
      "    hop_latency_ns: {:.0f}\n",
      p.nvlink_efficiency, p.pcie_efficiency, p.hop_latency_ns);
  if (!fitted.empty()) {
    s += "  fitted:\n";
    for (const std::string& f : fitted) s += "    " + f + "\n";
  }
  return s;
}

void write_fitted_section(const std::string& path, const FitReport& report) {
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::vector<std::string> out;
  bool skipping = false;
  for (const std::string& l : lines) {
    const bool top = !l.empty() && l[0] != ' ' && l[0] != '#';
    if (top) skipping = l.rfind("analytical:", 0) == 0;
    if (!skipping) out.push_back(l);
  }
  std::ofstream o(path);
  if (!o) throw InputError("--write: cannot write '" + path + "'");
  for (const std::string& l : out) o << l << "\n";
  o << analytical_section_yaml(report.params, report.yaml_fitted);
}

}  // namespace servesim
