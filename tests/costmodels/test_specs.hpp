#pragma once

#include "sim/gpu_spec.hpp"
#include "sim/replica_spec.hpp"

namespace servesim::testing {

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

}  // namespace servesim::testing
