#include "costmodels/analytical/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "costmodels/analytical/collective_model.hpp"
#include "costmodels/analytical/gemm_model.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/replica_spec.hpp"
#include "sim/util/coordinate_search.hpp"
#include "sim/util/units.hpp"

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
  fitted_light.insert(fitted_light.end(), later.fitted_light.begin(), later.fitted_light.end());
  text += later.text;
}

FitReport fit_home_constants(
    const std::vector<std::pair<std::string, std::vector<VidurMlpRow>>>& data,
    const std::vector<ModelSpec>& models, const GpuSpec& gpu, const AnalyticalParams& start) {
  FitReport rep;
  rep.params = start;
  const AnalyticalTerms terms;
  const double bw = gpu.memory_bw_gb_per_s;
  // The light fractions fitted here are this GPU's own: it becomes their home.
  rep.params.light_home_bytes_per_sm_clk =
      bw / (gpu.sms * gpu.boost_clock_mhz * kGhzPerMhz * rep.params.clock_fraction);

  // Light kernels: per kernel kind, t/count = (t_lat^q + t_bw^q)^(1/q), t_lat = floor +
  // row_elem_ns · row elements · waves of rows, t_bw = the bytes at fraction · BW (a norm's or
  // the add's just-written input from L2 while it fits: light_kernel_ns).
  std::map<LightKernel, std::vector<LightWork>> lx;
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
        const double t = row.ms[i] * kNsPerMsF;
        if (uses[i].count <= 0 || !(t > 0)) continue;
        lx[uses[i].kernel].push_back(uses[i].work);
        ly[uses[i].kernel].push_back(t / uses[i].count);
        ++lfiles[uses[i].kernel][short_path(data[f].first)];
      }
    }
  }
  rep.text += fmt::format("Fitted on {}'s profile, {} files\n", gpu.name, data.size());
  const double slots = row_slots(gpu, start);
  // RMSNorm first: its rows also fit the L2 reuse of a just-written input (every norm reads the
  // tensor the op before it wrote, on every model and TP degree), which the other kernels then
  // share. The search starts from a quarter of L2 at twice the stream rate (from "no reuse" no
  // single step of either constant changes a time).
  std::vector<LightKernel> order;
  if (lx.count(LightKernel::kRmsNorm) && lx[LightKernel::kRmsNorm].size() >= 4) {
    order.push_back(LightKernel::kRmsNorm);
    rep.params.light_l2_resident_fraction = 0.25;
    rep.params.light_l2_speedup = 2;
  }
  for (const auto& [k, x] : lx) {
    if (k != LightKernel::kRmsNorm && x.size() >= 4) order.push_back(k);
  }
  for (const LightKernel k : order) {
    const std::vector<LightWork>& x = lx[k];
    const bool shares_l2 = k == LightKernel::kRmsNorm;
    const bool reads_l2 =
        std::any_of(x.begin(), x.end(), [](const LightWork& w) { return w.reuse_bytes > 0; });
    // Start from the additive form's relative least squares (floor + bytes / (fraction · BW)),
    // then a coordinate search on the knee form's MAPE; the row latency is searched only for
    // per-token kernels (row elements > 0) and is 0 for elementwise ones.
    std::vector<std::vector<double>> xb;
    bool per_row = false;
    for (const LightWork& w : x) {
      xb.push_back({1.0, w.bytes});
      per_row = per_row || w.row_elems > 0;
    }
    const Eigen::VectorXd beta = relative_lsq(xb, ly[k]);
    AnalyticalParams::Light l{std::max(1000.0, beta(0)),
                              beta(1) > 0 ? std::min(1.0, 1.0 / (beta(1) * bw)) : 0.5, 0.0};
    const std::vector<double>& y = ly[k];
    auto mape = [&](const AnalyticalParams::Light& c) {
      const LightMemory m = light_memory(gpu, rep.params);
      double s = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        s += std::abs(light_kernel_ns(c, x[i], m, slots, start.knee_q, terms, 1.0) - y[i]) / y[i];
      }
      return 100 * s / static_cast<double>(y.size());
    };
    // A kernel streams at most the datasheet bandwidth (the loader refuses a fraction above 1);
    // L2 holds at most all of L2 and reads no slower than DRAM.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<SearchAxis> axes = {{&l.floor_ns, 0.0, kInf, 800},
                                    {&l.bw_fraction, 0.01, 1.0, 0.1}};
    if (per_row) axes.push_back({&l.row_elem_ns, 0.0, kInf, 0.2});
    if (shares_l2) {
      axes.push_back({&rep.params.light_l2_resident_fraction, 0.0, 1.0, 0.1});
      axes.push_back({&rep.params.light_l2_speedup, 1.0, kInf, 0.5});
    }
    const double best = coordinate_search(axes, 10, mape(l), [&] { return mape(l); });
    if (shares_l2) {
      rep.text += fmt::format(
          "  light L2 reuse: resident {:.3f} of L2, read at {:.2f}x the stream rate "
          "(fitted on rmsnorm)\n",
          rep.params.light_l2_resident_fraction, rep.params.light_l2_speedup);
      rep.yaml_fitted.push_back(fmt::format(
          "light.l2: {{l2_resident_fraction: {:.4f}, l2_speedup: {:.4f}, rows: {}, method: "
          "coordinate search with light.rmsnorm (started from 0.25 and 2) minimising its MAPE "
          "with hit = min(input bytes the op before wrote, l2_resident_fraction * L2) read at "
          "l2_speedup x bw_fraction * BW, from: \"{}\"}}",
          rep.params.light_l2_resident_fraction, rep.params.light_l2_speedup, x.size(),
          rows_note(lfiles[k])));
    }
    rep.params.light[static_cast<std::size_t>(k)] = l;
    rep.fitted_light.push_back(k);
    rep.text += fmt::format(
        "  light {:<10} floor {:8.0f} ns  bw_fraction {:.3f}  row {:.4f} ns/elem  MAPE {:.2f}% "
        "({} rows)\n",
        light_kernel_name(k), l.floor_ns, l.bw_fraction, l.row_elem_ns, best, x.size());
    rep.yaml_fitted.push_back(fmt::format(
        "light.{}: {{floor_ns: {:.0f}, bw_fraction: {:.4f}, row_elem_ns: {:.4f}, rows: {}, "
        "method: coordinate search minimising the MAPE of t = (t_lat^q + t_bw^q)^(1/q), {}, "
        "t_lat = floor + row_elem_ns * row elements * ceil(tokens / (SMs * row_ctas_per_sm)), "
        "q = knee_q, from: \"{}\"}}",
        light_kernel_name(k), l.floor_ns, l.bw_fraction, l.row_elem_ns, x.size(),
        reads_l2 ? "t_bw = (bytes - hit)/(fraction*BW) + hit/(l2_speedup*fraction*BW) (hit: "
                   "light.l2)"
                 : "t_bw = bytes/(fraction*BW)",
        rows_note(lfiles[k])));
  }

  // GEMMs: per row, every (tile, split-K) candidate (fixed by the shape), then the memory
  // branch on decode-shaped rows, then a coordinate search over (efficiency, launch floor,
  // per-wave overhead) minimising the MAPE with every other term on.
  struct GemmRow {
    GemmShape shape;
    std::vector<GemmCandidate> cands;
    double meas;
  };
  std::vector<GemmRow> g;
  std::map<std::string, int> gfiles;
  const double peak = gpu.bf16_flop_per_ns();
  for (std::size_t f = 0; f < data.size(); ++f) {
    for (const VidurMlpRow& row : data[f].second) {
      const LayerShapes s = LayerShapes::make(models[f], row.tp);
      const VidurOp ops[] = {VidurOp::kAttnPreProj, VidurOp::kAttnPostProj, VidurOp::kMlpUpProj,
                             VidurOp::kMlpDownProj};
      for (std::size_t j = 0; j < 4; ++j) {
        const double meas = row.ms[static_cast<std::size_t>(ops[j])] * kNsPerMsF;
        if (!(meas > 0)) continue;
        const GemmShape shape = s.gemm(static_cast<ProjOp>(j), row.num_tokens);
        g.push_back({shape, {}, meas});
        ++gfiles[short_path(data[f].first)];
      }
    }
  }
  // Memory branch first: decode-shaped rows (M ≤ 16) are memory-bound, t = a + bytes·b (the
  // bytes of the unsplit GEMM), which is the L2 law's identity
  // t = (bytes + x_half·L2) / (eta_max·BW).
  {
    std::vector<std::vector<double>> mx;
    std::vector<double> my;
    for (const GemmRow& r : g) {
      if (r.shape.m > 16) continue;
      mx.push_back({1.0, gemm_candidates(r.shape, 2, gpu, start, false, false).front().bytes});
      my.push_back(r.meas);
    }
    if (mx.size() >= 4) {
      const Eigen::VectorXd beta = relative_lsq(mx, my);
      if (beta(1) > 0 && beta(0) > 0) {
        rep.params.eta_max = 1 / (beta(1) * bw);
        rep.params.x_half = beta(0) * rep.params.eta_max * bw / gpu.l2_bytes();
      }
      rep.text += fmt::format("  memory  eta_max {:.4f}  x_half {:.4f}  ({} rows with M ≤ 16)\n",
                              rep.params.eta_max, rep.params.x_half, mx.size());
      rep.yaml_fitted.push_back(fmt::format(
          "memory_start: {{eta_max: {:.4f}, x_half: {:.4f}, rows: {}, method: relative least "
          "squares t = (bytes + x_half*L2)/(eta_max*BW) on GEMM rows with M <= 16 (the start of "
          "the joint gemm search, which sets the final values), from: \"{}\"}}",
          rep.params.eta_max, rep.params.x_half, mx.size(), rows_note(gfiles)));
    }
  }
  // The memory-law start of the joint search below (the isolated fit above).
  const double mem_eta_max = rep.params.eta_max;
  const double mem_x_half = rep.params.x_half;
  const AnalyticalTerms all_on;
  auto mape = [&](const AnalyticalParams& p) {
    double s = 0;
    const double eff = peak * p.gemm_efficiency * p.clock_fraction;
    for (const GemmRow& r : g) {
      double t = std::numeric_limits<double>::infinity();
      for (const GemmCandidate& c : r.cands) {
        t = std::min(t, candidate_ns(r.shape, c, eff, gpu, p, all_on));
      }
      t += p.gemm_launch_ns;
      s += std::abs(t - r.meas) / r.meas;
    }
    return 100 * s / static_cast<double>(g.size());
  };
  // One coordinate search over (efficiency, launch floor, per-wave overhead) for a given
  // lone-CTA utilization (the candidates depend on it); returns the MAPE reached.
  auto search = [&](AnalyticalParams& p) {
    for (GemmRow& r : g) r.cands = gemm_candidates(r.shape, 2, gpu, p, true, true);
    // Coordinate search from fixed starting values (not from `start`, so a refit reproduces
    // the shipped constants): halve the step each round.
    p.gemm_efficiency = std::min(1.0, 0.7 / p.clock_fraction);
    p.gemm_launch_ns = 1000;
    p.wave_ns = 500;
    p.eta_max = std::min(1.0, mem_eta_max);
    p.x_half = mem_x_half;
    // Physical bounds, which the hardware-file loader enforces too: a GEMM reaches at most the
    // datasheet peak, and the memory law's plateau at most the datasheet bandwidth.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const std::vector<SearchAxis> axes = {{&p.gemm_efficiency, 0.0, 1.0, 0.04 / p.clock_fraction},
                                          {&p.gemm_launch_ns, 0.0, kInf, 800},
                                          {&p.wave_ns, 0.0, kInf, 800},
                                          {&p.eta_max, 0.0, 1.0, 0.02},
                                          {&p.x_half, 0.0, kInf, 0.02}};
    return coordinate_search(axes, 6, mape(p), [&] { return mape(p); });
  };
  if (!g.empty()) {
    // The lone-CTA utilization only matters when tiles share SMs; search it on a 0.1 grid and
    // then ±0.05 around the best (each point a full coordinate search).
    AnalyticalParams p = rep.params;
    double best = 0;
    const bool shared =
        p.launch_model == LaunchModel::kGrid && p.ctas_per_sm > 1 && start.lone_cta_utilization > 0;
    if (!shared) {
      best = search(p);
    } else {
      AnalyticalParams q = p;
      best = std::numeric_limits<double>::infinity();
      auto probe = [&](double u) {
        AnalyticalParams t = q;
        t.lone_cta_utilization = u;
        const double m = search(t);
        if (m < best - 1e-9) {
          best = m;
          p = t;
        }
      };
      for (const double u : {0.6, 0.7, 0.8, 0.9, 1.0}) probe(u);
      const double centre = p.lone_cta_utilization;
      for (const double d : {-0.05, 0.05}) {
        if (centre + d > 0 && centre + d <= 1) probe(centre + d);
      }
      rep.params.lone_cta_utilization = p.lone_cta_utilization;
    }
    rep.params.gemm_efficiency = p.gemm_efficiency;
    rep.params.gemm_launch_ns = p.gemm_launch_ns;
    rep.params.wave_ns = p.wave_ns;
    rep.params.eta_max = p.eta_max;
    rep.params.x_half = p.x_half;
    rep.text += fmt::format(
        "  gemm efficiency {:.4f} (×clock_fraction {:.3f})  launch {:.0f} ns  wave {:.0f} ns  "
        "lone CTA {:.2f}  eta_max {:.4f}  x_half {:.4f}  GEMM MAPE {:.2f}% ({} rows)\n",
        p.gemm_efficiency, p.clock_fraction, p.gemm_launch_ns, p.wave_ns, p.lone_cta_utilization,
        p.eta_max, p.x_half, best, g.size());
    rep.yaml_fitted.push_back(fmt::format(
        "gemm: {{efficiency: {:.4f}, launch_ns: {:.0f}, wave_ns: {:.0f}, "
        "lone_cta_utilization: {:.2f}, eta_max: {:.4f}, x_half: {:.4f}, rows: {}, method: "
        "coordinate search minimising the MAPE of the qkv/o/gate_up/down GEMMs (fastest "
        "tile/split-K candidate per row) with every other term on, over efficiency, launch, "
        "wave and the memory law (from memory_start), for each lone_cta_utilization on a 0.1 "
        "grid refined by 0.05, from: \"{}\"}}",
        p.gemm_efficiency, p.gemm_launch_ns, p.wave_ns, p.lone_cta_utilization, p.eta_max, p.x_half,
        g.size(), rows_note(gfiles)));
  }
  return rep;
}

namespace {

struct NetFile {
  std::string path;
  std::string topology;
};

// The GPU's all_reduce.csv files under Vidur's profiling/network folder. `dir` may be that
// folder, the profiling folder above it, or the profiling/compute folder (or a GPU's folder in
// it) beside it: the same --profiles the compute commands take.
std::vector<NetFile> find_network_files(const std::string& dir, const GpuSpec& gpu) {
  std::vector<std::string> stems = {gpu.name};
  for (const auto& a : gpu.aliases) stems.push_back(a);
  const fs::path d(dir);
  for (const fs::path& root :
       {d, d / "network", d / ".." / "network", d / ".." / ".." / "network"}) {
    std::vector<NetFile> out;
    for (std::string stem : stems) {
      for (char& c : stem) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (const auto& [suffix, topo] : {std::pair<std::string, std::string>{"_dgx", "nvlink"},
                                         {"_pairwise_nvlink", "pairwise_nvlink"}}) {
        const fs::path p = root / (stem + suffix) / "all_reduce.csv";
        if (is_regular(p)) out.push_back({p.lexically_normal().string(), topo});
      }
      if (!out.empty()) return out;
    }
  }
  return {};
}

std::vector<NetFile> network_files(const std::string& dir, const GpuSpec& gpu) {
  std::vector<NetFile> out = find_network_files(dir, gpu);
  if (!out.empty()) return out;
  throw InputError("--profiles: no <gpu>_dgx or <gpu>_pairwise_nvlink all_reduce.csv for '" +
                   gpu.name + "' under " + dir +
                   " (expected Vidur's profiling/network folder, or " +
                   "the profiling or profiling/compute folder beside it); its interconnect: " +
                   gpu.interconnect_summary());
}

}  // namespace

bool has_network_profile(const std::string& dir, const GpuSpec& gpu) {
  return !find_network_files(dir, gpu).empty();
}

NetworkValidation validate_network(const std::string& dir, const GpuSpec& gpu,
                                   const AnalyticalParams& params) {
  NetworkValidation v;
  v.interconnect = gpu.interconnect_summary();
  for (const NetFile& f : network_files(dir, gpu)) {
    std::map<int, NetworkValidation::Slice> by_p;
    for (const VidurNetworkRow& r : read_vidur_network(f.path, "all_reduce")) {
      if (r.devices_per_node != r.num_workers) continue;  // multi-node rows: not modelled
      const TpTopology topo(r.num_workers, f.topology, gpu, params);
      auto& s = by_p[r.num_workers];
      s.file = short_path(f.path);
      s.topology = f.topology;
      s.workers = r.num_workers;
      const double predicted = topo.all_reduce_ns(r.size_bytes);
      s.stats.add(predicted, r.ms * kNsPerMsF);
      (r.size_bytes < 1024.0 * 1024.0 ? s.small : s.large).add(predicted, r.ms * kNsPerMsF);
      ++s.algorithms[TpTopology::algorithm_name(topo.algorithm(r.size_bytes))];
    }
    for (auto& [p, s] : by_p) v.slices.push_back(s);
  }
  return v;
}

KvTransferValidation validate_kv_transfer(const std::string& dir, const GpuSpec& gpu,
                                          const ClusterSpec& cluster) {
  KvTransferValidation v;
  for (const NetFile& f : network_files(dir, gpu)) {
    const std::string path = (fs::path(f.path).parent_path() / "send_recv.csv").string();
    if (!is_regular(path)) continue;
    // Two one-GPU replicas on GPUs 0 and 1: one node, or (one GPU per node) two.
    Fleet fleet;
    for (int i = 0; i < 2; ++i) {
      ReplicaSpec spec;
      spec.gpu = &gpu;
      spec.topology = f.topology;
      fleet.push_back(std::make_unique<Replica>(i, spec, nullptr, KvCache(1, 16, 0), 1));
    }
    std::map<bool, KvTransferValidation::Slice> by_placement;
    for (const bool same : {true, false}) {
      ClusterSpec c = cluster;
      c.gpus_per_node = same ? 8 : 1;
      const LinkNetwork net(fleet, c);
      for (const VidurNetworkRow& r : read_vidur_network(path, "send_recv")) {
        if (r.num_workers != 2 || (r.devices_per_node == 2) != same) continue;
        auto& s = by_placement[same];
        s.file = short_path(path);
        s.topology = f.topology;
        s.same_node = same;
        const double predicted = static_cast<double>(net.solo_time_ns(0, 1, r.size_bytes));
        s.all.add(predicted, r.ms * kNsPerMsF);
        (r.size_bytes < 1024.0 * 1024.0 ? s.small : s.large).add(predicted, r.ms * kNsPerMsF);
      }
    }
    for (const bool same : {true, false}) {
      if (by_placement.count(same)) v.slices.push_back(by_placement[same]);
    }
  }
  return v;
}

FitReport fit_network_constants(const std::string& dir, const GpuSpec& gpu,
                                const AnalyticalParams& start) {
  FitReport rep;
  rep.params = start;
  // Ring: t = floor + 2(p−1)·hop + 2(p−1)/p · S / (link_bw · η_link): linear in 1/η_nvlink,
  // 1/η_pcie, hop and floor. Rows NCCL may run as NVLS (a multicast NVSwitch, p > 2) follow
  // another law and stay out.
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
      if (topo.has_nvls()) continue;
      const double bw = topo.ring_bottleneck_bytes_per_ns();
      const bool nv = std::abs(bw - gpu.nvlink_gb_per_s / 2) < 1e-9;
      const double xfer = 2 * (p - 1) / p * r.size_bytes / bw;
      x.push_back({nv ? xfer : 0.0, nv ? 0.0 : xfer, 2 * (p - 1), 1.0});
      y.push_back(r.ms * kNsPerMsF);
      ++files[short_path(f.path)];
    }
  }
  if (x.size() < 4) return rep;
  const Eigen::VectorXd beta = relative_lsq(x, y);
  if (beta(0) > 0) rep.params.nvlink_efficiency = 1 / beta(0);
  if (beta(1) > 0) rep.params.pcie_efficiency = 1 / beta(1);
  rep.params.hop_latency_ns = std::max(0.0, beta(2));
  rep.params.collective_floor_ns = std::max(0.0, beta(3));
  rep.text += fmt::format(
      "  all-reduce nvlink_efficiency {:.3f}  pcie_efficiency {:.3f}  "
      "hop_latency {:.0f} ns  floor {:.0f} ns  ({} single-node ring rows)\n",
      rep.params.nvlink_efficiency, rep.params.pcie_efficiency, rep.params.hop_latency_ns,
      rep.params.collective_floor_ns, y.size());
  rep.yaml_fitted.push_back(fmt::format(
      "collectives: {{nvlink_efficiency: {:.4f}, pcie_efficiency: {:.4f}, hop_latency_ns: {:.0f}, "
      "floor_ns: {:.0f}, rows: {}, method: relative least squares of the ring formula "
      "t = floor + 2(p-1) hop + 2(p-1)/p bytes / (efficiency link) on single-node rows NCCL runs "
      "as a ring, from: \"{}\"}}",
      rep.params.nvlink_efficiency, rep.params.pcie_efficiency, rep.params.hop_latency_ns,
      rep.params.collective_floor_ns, y.size(), rows_note(files)));
  return rep;
}

}  // namespace servesim
