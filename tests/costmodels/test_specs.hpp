#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/config_node.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim::testing {

// A complete `analytical:` + `host:` section for the hand-built specs (round numbers near the
// A100 calibration; the tests below check mechanisms, not these values).
inline ConfigNode test_constants() {
  return ConfigNode::parse(R"(
analytical:
  gemm: {efficiency: 0.75, clock_fraction: 1.0, launch_ns: 1000, launch_model: grid,
         cluster_size: 1, ctas_per_sm: 4, split_k_min_k: 256, knee_q: 3, wave_ns: 2000,
         accumulator_budget: 32768, lone_cta_utilization: 0.85,
         tiles: [[256, 128], [128, 256], [128, 128], [128, 64], [64, 128], [64, 64]]}
  memory: {eta_max: 0.83, x_half: 0.13}
  attention: {prefill_efficiency: 0.6, decode_bw_fraction: 0.7, floor_ns: 8000}
  light:
    graph_launch_scale: 0.5
    row_ctas_per_sm: 2
    l2_resident_fraction: 0
    l2_speedup: 1
    home_bytes_per_sm_clk: 13.3898
    rmsnorm: {floor_ns: 4800, bw_fraction: 0.35, row_elem_ns: 0}
    layernorm: {floor_ns: 7400, bw_fraction: 0.48, row_elem_ns: 0}
    rope: {floor_ns: 3900, bw_fraction: 0.42, row_elem_ns: 0}
    silu_mul: {floor_ns: 4000, bw_fraction: 0.48, row_elem_ns: 0}
    gelu: {floor_ns: 2000, bw_fraction: 0.64, row_elem_ns: 0}
    add: {floor_ns: 2000, bw_fraction: 0.89, row_elem_ns: 0}
    kv_write: {floor_ns: 7700, bw_fraction: 0.22, row_elem_ns: 0}
    embedding: {floor_ns: 5000, bw_fraction: 0.15, row_elem_ns: 0}
    sampling: {floor_ns: 20000, bw_fraction: 0.5, row_elem_ns: 0}
  collectives: {nvlink_efficiency: 0.55, pcie_efficiency: 0.72, hop_latency_ns: 4100, floor_ns: 0}
host: {eager_floor_ns: 2000000, graph_floor_ns: 500000, slope_ns: 0}
)",
                           "tests/costmodels/test_specs.hpp");
}

// Hand-built A100-80GB-like and H100-like specs and a Llama-2-7B-like model, so the cost-model
// tests do not depend on the catalog files.
inline GpuSpec a100_like() {
  GpuSpec g;
  g.name = "a100_test";
  g.arch = "ampere";
  g.sms = 108;
  g.boost_clock_mhz = 1410;
  g.bf16_tflops = 312;
  g.memory_gb = 80;
  g.memory_bw_gb_per_s = 2039;
  g.l2_mb = 40;
  g.tdp_w = 400;
  g.nvlink_gb_per_s = 600;
  g.pcie_gb_per_s = 32;
  g.file = test_constants();
  return g;
}

inline GpuSpec h100_like() {
  GpuSpec g = a100_like();
  g.name = "h100_test";
  g.arch = "hopper";
  g.sms = 132;
  g.gpc_sms = {18, 18, 18, 18, 18, 18, 16, 8};
  g.boost_clock_mhz = 1980;
  g.bf16_tflops = 989.4;
  g.fp8_tflops = 1978.9;
  g.memory_bw_gb_per_s = 3352;
  g.l2_mb = 50;
  g.tdp_w = 700;
  g.nvlink_gb_per_s = 900;
  g.pcie_gb_per_s = 64;
  return g;
}

inline ModelSpec llama2_7b_like() {
  ModelSpec m;
  m.name = "test/llama-2-7b";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 32;
  m.head_dim = 128;
  m.intermediate_size = 11008;
  m.vocab_size = 32000;
  m.max_position_embeddings = 4096;
  return m;
}

inline ReplicaSpec replica_of(const GpuSpec& g, const ModelSpec& m, int tp = 1) {
  ReplicaSpec r;
  r.gpu = &g;
  r.model = &m;
  r.tp = tp;
  return r;
}

// The A100-40GB's hardware file without its `power:` section, written to a temporary folder:
// every catalog GPU has one, so a GPU without is made here. Returns the file's path.
inline std::string a100_without_power() {
  std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/a100-40gb.yaml");
  std::string text;
  bool skipping = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("power:", 0) == 0)
      skipping = true;
    else if (skipping && !line.empty() && line[0] != ' ')
      skipping = false;
    if (!skipping) text += line + "\n";
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "servesim_power_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / "a100-40gb-no-power.yaml";
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace servesim::testing
