// The analytical section a fit writes into a hardware file: its YAML text, and the rewrite of
// that section in place (calibration.hpp).
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "costmodels/analytical/calibration.hpp"
#include "sim/config/input_error.hpp"

namespace servesim {

std::string analytical_section_yaml(const AnalyticalParams& p,
                                    const std::vector<std::string>& fitted) {
  std::string s = "analytical:\n";
  s +=
      "  source: |\n"
      "    Written by `costmodel fit` (see fitted: for each fitted constant, its method and the\n"
      "    profile rows used). light.l2_resident_fraction and l2_speedup: the share of L2 that\n"
      "    still holds the input a light kernel's predecessor just wrote (a norm's input, the\n"
      "    residual add's projection output; not the activation's or RoPE's, whose fits it\n"
      "    worsens), and its read rate over the kernel's DRAM stream, fitted with light.rmsnorm\n"
      "    (fitted: light.l2), whose input every profile row writes just before it.\n"
      "    Not fitted here: attention (prefill_efficiency: FlashAttention-2\n"
      "    forward reaches 50-73% of A100 peak, Dao 2023; decode_bw_fraction and floor_ns:\n"
      "    UNCALIBRATED, no attention profile in data/), light.kv_write (A100-80 ncu measurement:\n"
      "    7.7 us floor, 0.22 of BW), light.sampling (UNCALIBRATED), graph_launch_scale (public\n"
      "    launch costs ~2.5 us eager vs ~1.3 us in a CUDA graph), tiles (the\n"
      "    cuBLAS/CUTLASS SM80 ladder), knee_q and split_k_min_k (chosen, not fitted),\n"
      "    ctas_per_sm 4 and accumulator_budget 32768 (datasheet: 64K 32-bit registers per SM;\n"
      "    a tile's fp32 accumulators may hold half of them, so 256x128 runs 1 CTA per SM, "
      "128x128\n"
      "    two, 128x64 and smaller four; a 4-warp CTA at <= 128 registers per thread fits 4x),\n"
      "    light.row_ctas_per_sm (CUDA C Programming Guide, compute capabilities: 2048 threads\n"
      "    per SM on sm80/sm90/sm100 hold two 1024-thread row CTAs, 1536 on sm86/89/120 one).\n";
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
      "    knee_q: {:g}\n    wave_ns: {:.0f}\n    accumulator_budget: {:g}\n"
      "    lone_cta_utilization: {:.2f}\n",
      p.gemm_efficiency, p.clock_fraction, p.gemm_launch_ns, lm, p.cluster_size, p.ctas_per_sm,
      tiles, p.split_k_min_k, p.knee_q, p.wave_ns, p.accumulator_budget, p.lone_cta_utilization);
  s += fmt::format("  memory:\n    eta_max: {:g}\n    x_half: {:g}\n", p.eta_max, p.x_half);
  s += fmt::format(
      "  attention:\n    prefill_efficiency: {:g}\n    decode_bw_fraction: {:g}\n"
      "    floor_ns: {:.0f}\n",
      p.prefill_attn_efficiency, p.decode_attn_bw_fraction, p.attn_floor_ns);
  s += fmt::format(
      "  light:\n    graph_launch_scale: {:g}\n    row_ctas_per_sm: {}\n"
      "    l2_resident_fraction: {:.4f}\n    l2_speedup: {:.4f}\n"
      "    home_bytes_per_sm_clk: {:.4f}\n",
      p.graph_launch_scale, p.row_ctas_per_sm, p.light_l2_resident_fraction, p.light_l2_speedup,
      p.light_home_bytes_per_sm_clk);
  for (std::size_t i = 0; i < kNumLightKernels; ++i) {
    s += fmt::format("    {}: {{floor_ns: {:.0f}, bw_fraction: {:.4f}, row_elem_ns: {:.4f}}}\n",
                     light_kernel_name(static_cast<LightKernel>(i)), p.light[i].floor_ns,
                     p.light[i].bw_fraction, p.light[i].row_elem_ns);
  }
  s += fmt::format(
      "  collectives:\n    nvlink_efficiency: {:.4f}\n    pcie_efficiency: {:.4f}\n"
      "    hop_latency_ns: {:.0f}\n    floor_ns: {:.0f}\n",
      p.nvlink_efficiency, p.pcie_efficiency, p.hop_latency_ns, p.collective_floor_ns);
  if (!fitted.empty()) {
    s += "  fitted:\n";
    for (const std::string& f : fitted) s += "    " + f + "\n";
  }
  return s;
}

void write_fitted_section(const std::string& path, const FitReport& report,
                          const std::string& template_yaml) {
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    std::istringstream from_template(in ? std::string() : template_yaml);
    std::istream& src = in ? static_cast<std::istream&>(in) : from_template;
    std::string line;
    while (std::getline(src, line)) lines.push_back(line);
  }
  // The key of a `fitted:` record ("light.rmsnorm", "gemm", "collectives", …).
  auto record_key = [](const std::string& l) {
    const std::size_t start = l.find_first_not_of(' ');
    const std::size_t colon = l.find(':', start);
    return start == std::string::npos || colon == std::string::npos
               ? std::string()
               : l.substr(start, colon - start);
  };
  std::set<std::string> refitted;
  for (const std::string& f : report.yaml_fitted) refitted.insert(record_key(f));
  std::vector<std::string> out;
  std::vector<std::string> kept;  // earlier records of constants not refitted now
  bool skipping = false;
  bool in_fitted = false;
  for (const std::string& l : lines) {
    const bool top = !l.empty() && l[0] != ' ' && l[0] != '#';
    if (top) skipping = l.rfind("analytical:", 0) == 0;
    if (!skipping) {
      out.push_back(l);
      continue;
    }
    if (l.rfind("  fitted:", 0) == 0) {
      in_fitted = true;
    } else if (in_fitted && l.rfind("    ", 0) == 0) {
      // One record per line ("    key: {…}", as this tool writes them); deeper lines of a
      // record in block style are not carried.
      const bool record = l.size() > 4 && l[4] != ' ' && l.find('{') != std::string::npos;
      if (record && !refitted.count(record_key(l))) kept.push_back(l.substr(4));
    } else if (!l.empty()) {
      in_fitted = false;
    }
  }
  std::vector<std::string> fitted = report.yaml_fitted;
  fitted.insert(fitted.end(), kept.begin(), kept.end());
  const std::string section = analytical_section_yaml(report.params, fitted);
  // The section must read back as the loader reads a hardware file, or the file is not written.
  try {
    AnalyticalParams check;
    check.apply_analytical(ConfigNode::parse(section, path).at("analytical"), true);
  } catch (const InputError& e) {
    throw InputError(std::string("--write: the fitted constants would not load (") + e.what() +
                     "); nothing written");
  }
  std::ofstream o(path);
  if (!o) throw InputError("--write: cannot write '" + path + "'");
  for (const std::string& l : out) o << l << "\n";
  o << section;
}

}  // namespace servesim
