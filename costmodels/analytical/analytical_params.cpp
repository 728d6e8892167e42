#include "costmodels/analytical/analytical_params.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

constexpr std::array<std::string_view, kNumLightKernels> kLightNames = {
    "rmsnorm", "layernorm", "rope", "silu_mul", "gelu", "add", "kv_write", "embedding", "sampling"};

LaunchModel parse_launch_model(const ConfigNode& n) {
  const std::string s = n.as_string();
  if (s == "grid") return LaunchModel::kGrid;
  if (s == "persistent") return LaunchModel::kPersistent;
  if (s == "cluster") return LaunchModel::kCluster;
  n.fail("unknown launch model '" + s + "' (known: cluster, grid, persistent)");
}

}  // namespace

std::string_view light_kernel_name(LightKernel k) {
  return kLightNames[static_cast<std::size_t>(k)];
}

AnalyticalParams AnalyticalParams::for_gpu(const GpuSpec& gpu) {
  if (!gpu.file.is_map()) {
    throw InputError("GPU '" + gpu.name +
                     "' has no hardware file: the analytical model needs its `analytical:` and "
                     "`host:` sections");
  }
  AnalyticalParams p;
  p.apply_analytical(gpu.file.at("analytical"), /*complete=*/true);
  p.apply_host(gpu.file.at("host"), /*complete=*/true);
  return p;
}

namespace {

// With `complete`, the section and each of `keys` must be present (ConfigNode::at names the file
// position and the missing key).
std::optional<ConfigNode> section(const ConfigNode& parent, std::string_view name, bool complete,
                                  std::initializer_list<std::string_view> keys) {
  if (!complete) return parent.find(name);
  ConfigNode s = parent.at(name);
  for (std::string_view k : keys) (void)s.at(k);
  return s;
}

}  // namespace

void AnalyticalParams::apply_analytical(const ConfigNode& a, bool complete) {
  a.require_map("the analytical cost model's constants");
  a.check_keys(
      {"source", "gemm", "memory", "attention", "light", "collectives", "sampler", "fitted"});
  if (auto sm = a.find("sampler")) {
    sm->require_map("the sampler's bytes per vocabulary entry");
    sm->check_keys(
        {"source", "random_bytes_per_entry", "top_p_bytes_per_entry", "penalty_bytes_per_entry"});
    sampler_random_bytes = sm->get_nonnegative("random_bytes_per_entry", sampler_random_bytes);
    sampler_top_p_bytes = sm->get_nonnegative("top_p_bytes_per_entry", sampler_top_p_bytes);
    sampler_penalty_bytes = sm->get_nonnegative("penalty_bytes_per_entry", sampler_penalty_bytes);
  }
  if (auto g = section(a, "gemm", complete,
                       {"efficiency", "clock_fraction", "launch_ns", "launch_model", "cluster_size",
                        "ctas_per_sm", "tiles", "split_k_min_k", "knee_q", "wave_ns",
                        "accumulator_budget", "lone_cta_utilization"})) {
    g->check_keys({"source", "efficiency", "clock_fraction", "launch_ns", "launch_model",
                   "cluster_size", "ctas_per_sm", "tiles", "split_k_min_k", "knee_q", "wave_ns",
                   "accumulator_budget", "lone_cta_utilization"});
    gemm_efficiency = g->get_positive_fraction("efficiency", gemm_efficiency);
    clock_fraction = g->get_positive_fraction("clock_fraction", clock_fraction);
    gemm_launch_ns = g->get_nonnegative("launch_ns", gemm_launch_ns);
    if (auto m = g->find("launch_model")) launch_model = parse_launch_model(*m);
    cluster_size = static_cast<int>(g->get_positive_int("cluster_size", cluster_size));
    ctas_per_sm = static_cast<int>(g->get_positive_int("ctas_per_sm", ctas_per_sm));
    if (auto t = g->find("tiles")) {
      tiles.clear();
      for (const ConfigNode& tile : t->items()) {
        if (!tile.is_sequence() || tile.size() != 2) tile.fail("expected a tile [rows, cols]");
        tiles.emplace_back(static_cast<int>(tile.at(std::size_t{0}).as_int()),
                           static_cast<int>(tile.at(std::size_t{1}).as_int()));
        if (tiles.back().first < 1 || tiles.back().second < 1) {
          tile.fail("tile sides must be positive");
        }
      }
      if (tiles.empty()) t->fail("expected at least one tile");
    }
    split_k_min_k = static_cast<int>(g->get_positive_int("split_k_min_k", split_k_min_k));
    knee_q = g->get_positive("knee_q", knee_q);
    wave_ns = g->get_nonnegative("wave_ns", wave_ns);
    accumulator_budget = g->get_nonnegative("accumulator_budget", accumulator_budget);
    lone_cta_utilization = g->get_fraction("lone_cta_utilization", lone_cta_utilization);
  }
  if (auto m = section(a, "memory", complete, {"eta_max", "x_half"})) {
    m->check_keys({"source", "eta_max", "x_half"});
    eta_max = m->get_positive_fraction("eta_max", eta_max);
    x_half = m->get_nonnegative("x_half", x_half);
  }
  if (auto t = section(a, "attention", complete,
                       {"prefill_efficiency", "decode_bw_fraction", "floor_ns"})) {
    t->check_keys(
        {"source", "prefill_efficiency", "decode_bw_fraction", "floor_ns", "decode_mma_rows"});
    decode_attn_mma_rows = t->get_nonnegative("decode_mma_rows", decode_attn_mma_rows);
    prefill_attn_efficiency =
        t->get_positive_fraction("prefill_efficiency", prefill_attn_efficiency);
    decode_attn_bw_fraction =
        t->get_positive_fraction("decode_bw_fraction", decode_attn_bw_fraction);
    attn_floor_ns = t->get_nonnegative("floor_ns", attn_floor_ns);
  }
  if (auto l = section(a, "light", complete,
                       {"graph_launch_scale", "row_ctas_per_sm", "l2_resident_fraction",
                        "l2_speedup", "home_bytes_per_sm_clk"})) {
    std::vector<std::string> known = {"source",          "graph_launch_scale",
                                      "row_ctas_per_sm", "l2_resident_fraction",
                                      "l2_speedup",      "home_bytes_per_sm_clk"};
    for (std::string_view n : kLightNames) known.emplace_back(n);
    l->check_keys(known);
    graph_launch_scale = l->get_fraction("graph_launch_scale", graph_launch_scale);
    row_ctas_per_sm = static_cast<int>(l->get_positive_int("row_ctas_per_sm", row_ctas_per_sm));
    light_l2_resident_fraction =
        l->get_fraction("l2_resident_fraction", light_l2_resident_fraction);
    light_l2_speedup = l->get_positive("l2_speedup", light_l2_speedup);
    light_home_bytes_per_sm_clk =
        l->get_positive("home_bytes_per_sm_clk", light_home_bytes_per_sm_clk);
    if (light_l2_speedup < 1) {
      l->at("l2_speedup")
          .fail(fmt::format("expected a speedup of at least 1 (L2 is not slower than DRAM), got {}",
                            light_l2_speedup));
    }
    for (std::size_t i = 0; i < kNumLightKernels; ++i) {
      if (auto k =
              section(*l, kLightNames[i], complete, {"floor_ns", "bw_fraction", "row_elem_ns"})) {
        k->check_keys({"floor_ns", "bw_fraction", "row_elem_ns", "source"});
        light[i].floor_ns = k->get_nonnegative("floor_ns", light[i].floor_ns);
        light[i].bw_fraction = k->get_positive_fraction("bw_fraction", light[i].bw_fraction);
        light[i].row_elem_ns = k->get_nonnegative("row_elem_ns", light[i].row_elem_ns);
      }
    }
  }
  if (auto c = section(a, "collectives", complete,
                       {"nvlink_efficiency", "pcie_efficiency", "hop_latency_ns", "floor_ns"})) {
    c->check_keys({"source", "nvlink_efficiency", "pcie_efficiency", "hop_latency_ns", "floor_ns",
                   "algorithm", "custom_max_bytes", "custom_floor_ns"});
    nvlink_efficiency = c->get_positive_fraction("nvlink_efficiency", nvlink_efficiency);
    pcie_efficiency = c->get_positive_fraction("pcie_efficiency", pcie_efficiency);
    hop_latency_ns = c->get_nonnegative("hop_latency_ns", hop_latency_ns);
    collective_floor_ns = c->get_nonnegative("floor_ns", collective_floor_ns);
    if (auto alg = c->find("algorithm")) {
      const std::string s = alg->as_string();
      if (s == "ring") {
        allreduce_algorithm = AllReduceAlgorithm::kRing;
      } else if (s == "vllm_custom") {
        allreduce_algorithm = AllReduceAlgorithm::kVllmCustom;
        if (!c->has("custom_floor_ns")) {
          alg->fail(
              "algorithm vllm_custom needs custom_floor_ns beside it (the custom kernel's "
              "fixed cost per call, ns)");
        }
      } else {
        alg->fail("unknown all-reduce algorithm '" + s + "' (known: ring, vllm_custom)");
      }
    }
    custom_allreduce_max_bytes = c->get_positive("custom_max_bytes", custom_allreduce_max_bytes);
    custom_allreduce_floor_ns = c->get_nonnegative("custom_floor_ns", custom_allreduce_floor_ns);
  }
}

void AnalyticalParams::apply_host(const ConfigNode& h, bool complete) {
  h.require_map("host-side step constants");
  if (complete) {
    for (std::string_view k : {"eager_floor_ns", "graph_floor_ns", "slope_ns"}) (void)h.at(k);
  }
  h.check_keys({"source", "eager_floor_ns", "graph_floor_ns", "slope_ns"});
  host_eager_floor_ns = h.get_nonnegative("eager_floor_ns", host_eager_floor_ns);
  host_graph_floor_ns = h.get_nonnegative("graph_floor_ns", host_graph_floor_ns);
  host_slope_ns = h.get_nonnegative("slope_ns", host_slope_ns);
}

}  // namespace servesim
