#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/collective_model.hpp"
#include "costmodels/analytical/power_model.hpp"
#include "costmodels/common/attention_work.hpp"
#include "costmodels/common/layer_shapes.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// What one light kernel does: the DRAM bytes it moves and, for a per-token kernel, the rows
// (tokens) and the elements of each row one CTA walks (0 for elementwise kernels).
// `reuse_bytes` of `bytes` are an input the kernel before it just wrote and L2 may still hold (a
// norm's input; the residual add's projection output).
struct LightWork {
  double bytes = 0;
  double rows = 0;
  double row_elems = 0;
  double reuse_bytes = 0;
};

// Where a light kernel's bytes come from: DRAM at `bw` bytes/ns and, for the input the kernel
// before it just wrote, L2 while that input is at most `l2_resident_bytes`
// (light_l2_resident_fraction · L2; the rest of a larger input was evicted), read at `l2_speedup` ×
// the kernel's own DRAM rate. `eta` is the DRAM stream ceiling (memory.eta_max) and `sm_ratio`
// the SM clocks this GPU has per DRAM byte over those of the GPU the fractions were fitted on
// (home DRAM bytes per SM clock / this GPU's), 0 where the law is not applied (light_memory:
// GPUs within kMinLightSmRatio of the home, the HBM parts).
struct LightMemory {
  double bw = 0;
  double l2_resident_bytes = 0;
  double l2_speedup = 1;
  double eta = 1;
  double sm_ratio = 0;
};
// The fraction of `m.bw` a kernel fitted at `bw_fraction` streams at on `m`. Below the ceiling
// η the law reads the fitted fraction f as held on the SM side: its SM-side rate s (a fraction of
// the home bandwidth) satisfies f^−q = η^−q + s^−q, and s is bytes in flight per SM over the
// DRAM latency, per clock (Little's law), so on a GPU with more SM clocks per DRAM byte it
// scales by sm_ratio and the fraction is (η^−q + (s · sm_ratio)^−q)^(−1/q). At sm_ratio ≤ 1,
// or at or above the ceiling, the kernel streams at f.
double light_stream_fraction(double bw_fraction, const LightMemory& m, double q);
LightMemory light_memory(const GpuSpec& gpu, const AnalyticalParams& p);

// One light kernel on the memory `m`. At few tokens it is latency-bound: the
// launch floor plus, for a per-token kernel, the serial walk of one row,
//   t_lat = floor + row_elem_ns · row_elems · ⌈rows / (row_slots)⌉  (row_slots = SMs · CTAs/SM),
// at many it streams at a fraction r = light_stream_fraction(bw_fraction) of the bandwidth,
//   t_bw = (bytes − hit) / (r · BW) + hit / (l2_speedup · r · BW),
//   hit = min(reuse_bytes, l2_resident_bytes),
// and the two overlap through the knee (t_lat^q + t_bw^q)^(1/q). Terms: `light` off prices the
// stream at full bandwidth, `light_l2` off reads every byte from DRAM, `launch` off drops the
// latency, `row_walk` off the row walk alone, `knee` off adds the two.
double light_kernel_ns(const AnalyticalParams::Light& l, const LightWork& w, const LightMemory& m,
                       double row_slots, double knee_q, const AnalyticalTerms& terms,
                       double launch_scale);
// Token rows resident at once: SMs · row_ctas_per_sm.
double row_slots(const GpuSpec& gpu, const AnalyticalParams& p);

// Prices the pieces of one replica's engine step with the analytical model (costmodels/README.md):
// the per-layer token-dependent work (projection GEMMs, light kernels, TP all-reduces), attention,
// the step's edges (embedding, final norm, LM head, sampling) and the host floor. Holds copies
// of everything it needs except the GPU and model specs, which must outlive it. Immutable;
// thread-safe.
//
// Energy: where the GPU has a power model, a pricing call given `nj` adds to it each kernel's
// energy above idle on one GPU, (P − idle_w) · t in nJ, P the board power at the clock the
// kernel's own activity settles at under the cap (dynamic_w). The host floor adds none (the GPU
// waits at idle power).
class LayerPricer {
 public:
  // Token-dependent cost of one layer, split by component (ns).
  struct LayerCost {
    double gemm = 0;
    double light = 0;
    double comm = 0;
    double energy_nj = 0;  // above idle, one GPU (0 without a power model)
    double total() const { return gemm + light + comm; }
  };

  LayerPricer(const ReplicaSpec& replica, const AnalyticalParams& params,
              const AnalyticalTerms& terms);

  const AnalyticalParams& params() const { return params_; }
  const AnalyticalTerms& terms() const { return terms_; }
  const LayerShapes& shapes() const { return shapes_; }
  // The clock fraction (of boost) every kernel runs at when the GPU has no power model.
  double f_clk() const { return f_clk_; }
  // Idle board power of one GPU (0 without a power model).
  double idle_w() const { return power_ ? power_->idle_w : 0.0; }
  // Board power above idle of a kernel priced at `ns` doing `flops` tensor FLOPs (against `peak`,
  // FLOP/ns at boost) and moving `bytes` of DRAM traffic: its activities at that time, at the
  // clock they settle at under the cap (no re-pricing), the power there (at most the cap unless
  // the clock is on its floor). 0 without a power model.
  double dynamic_w(double flops, double peak, double bytes, double ns) const;

  // One projection GEMM of the mean layer for `tokens` (MoE expert GEMMs for gate/up and down;
  // for an interleaved MoE model the layer-weighted mix of expert and dense MLP GEMMs).
  double proj_ns(ProjOp op, double tokens, bool graph, double* nj = nullptr) const;
  // The activation of the mean layer (MoE and dense layers mixed for an interleaved model).
  double act_ns(double tokens, bool graph, double* nj = nullptr) const;
  // One light kernel doing `w`, its launch floor and row walk at the clock it settles at under
  // the replica's cap (its DRAM stream does not move with the clock).
  double light_ns(LightKernel k, const LightWork& w, bool graph, double* nj = nullptr) const;
  // The KV-cache write of `tokens` new tokens (one CTA per token over its K and V rows).
  LightWork kv_write_work(double tokens) const;
  LayerCost layer_ns(double tokens, bool graph) const;
  // An MoE replica laid out by expert or attention data parallelism (ReplicaSpec::moe_parallel)
  // prices a layer in two parts that add: the work an attention group does on its own
  // `tokens` (projections, norms, RoPE, KV write, the residual add; the router, shared expert and
  // dense layers' MLP; the group's all-reduce), and the routed experts of one expert rank when
  // `tokens` are routed over all ranks, with the dispatch before them and the combine after
  // (an all-gather and a reduce-scatter of the tokens over the stage's GPUs with attention
  // groups, else the all-reduce that follows the experts). layer_ns(t) of such a replica is
  // group_side_ns(t) + expert_side_ns(t).
  LayerCost group_side_ns(double tokens, bool graph) const;
  LayerCost expert_side_ns(double tokens, bool graph) const;
  // The kernels of one MoE layer around its expert GEMMs, each little data but a launch of its
  // own: the top-k of `tokens` rows of router logits (route_select_ns, run where the router
  // ran), and for `tokens` routed to this GPU's experts the sort of their (token, expert) pairs
  // by expert, the activations' quantization before each expert GEMM where the weight format
  // quantizes them (fp8, nvfp4), and the weighted sum of each token's expert outputs
  // (route_dispatch_ns). No profile times these kernels: each is priced as the light kernel of
  // its shape (one CTA per row as the norm, elementwise as the add).
  double route_select_ns(double tokens, bool graph, double* nj = nullptr) const;
  double route_dispatch_ns(double tokens, bool graph, double* nj = nullptr) const;
  bool moe_parallel() const { return moe_parallel_; }
  int attention_dp() const { return attention_dp_; }
  double attention_ns(const AttentionWork& w, bool graph, double* nj = nullptr) const;
  // Embedding lookup + final norm for `tokens` tokens.
  double edge_tokens_ns(double tokens, bool graph, double* nj = nullptr) const;
  // LM head GEMM and sampling for `requests` sequences.
  double edge_requests_ns(double requests, bool graph, double* nj = nullptr) const;
  double host_ns(double requests, bool graph) const;
  double all_reduce_ns(double bytes) const;
  // Pipeline parallelism: handing the activations of `tokens` across every stage boundary once.
  double stage_transfers_ns(double tokens, double* nj = nullptr) const;
  // … and across the boundary after `stage` alone (0 with the collectives term off).
  double stage_boundary_ns(double tokens, int stage) const;
  // The bytes one step of `tokens` hands across a stage boundary.
  double stage_handoff_bytes(double tokens) const;
  // The final norm over `tokens` (part of edge_tokens_ns; vLLM runs it on the last stage).
  double final_norm_ns(double tokens, bool graph) const;
  // The operations of one layer as Vidur's mlp.csv times them (eager), ns; NaN where the model
  // has no such kernel.
  std::array<double, kNumVidurOps> vidur_ops_ns(double tokens) const;
  // The light kernel behind a Vidur op: `count` launches each doing `work` (count 0: not a
  // light op, or absent in this model).
  struct LightUse {
    LightKernel kernel = LightKernel::kAdd;
    LightWork work;
    double count = 0;
  };
  std::array<LightUse, kNumVidurOps> vidur_light_uses(double tokens) const;

 private:
  double launch_scale(bool graph) const { return graph ? params_.graph_launch_scale : 1.0; }
  // A kernel whose time at clock fraction x (of boost) is time_at(x), doing `flops` tensor FLOPs
  // against `peak` (FLOP/ns at boost) and moving `bytes`: at f_clk, or when capped (a power model
  // and a cap below the TDP) at f_clk times the ratio of its own clocks under the cap and at the
  // TDP (under_cap).
  bool capped() const { return power_ && cap_w_ < gpu_->tdp_w; }
  template <class TimeAt>
  double clocked_ns(double flops, double peak, double bytes, TimeAt&& time_at) const {
    if (!capped()) return time_at(f_clk_);
    return under_cap(*power_, *gpu_, cap_w_, f_clk_, flops, peak, bytes, time_at).time_ns;
  }
  // `ns`, after adding its energy to `nj` (when given) as dynamic_w prices it.
  double tally(double* nj, double ns, double flops, double peak, double bytes) const {
    if (nj != nullptr && power_) *nj += ns * dynamic_w(flops, peak, bytes, ns);
    return ns;
  }
  // gemm_ns, or gemm_under_cap when capped.
  double gemm_at(const GemmShape& g, double wbytes, double peak, bool graph, double* nj) const;
  double gemm(const GemmShape& g, bool graph, double* nj) const;
  // A projection of the mean layer of a hybrid model: `full`, a full-attention layer's time
  // (its energy in `nj`), mixed by their shares with the linear-attention layer's (and `nj` so).
  double with_linear(ProjOp op, double tokens, bool graph, double full, double* nj) const;
  // MLA's three QKV GEMMs (LayerShapes::mla_qkv_gemms).
  double mla_qkv_ns(double tokens, bool graph, double* nj) const;
  // A GEMM whose weights FP8 checkpoints leave in bf16 (LM head, MoE router: the usual
  // quantization recipes skip them), at the bf16 peak.
  double unquantized_gemm(const GemmShape& g, bool graph, double* nj) const;
  LightKernel norm_kernel() const;
  LightKernel act_kernel() const;
  LightWork norm_work(double tokens) const;
  LightWork act_work(double tokens) const;
  LightWork act_work(double rows, double inter) const;  // `rows` MLP rows of `inter`
  LightWork rope_work(double tokens) const;
  LightWork add_work(double tokens) const;
  LightWork embedding_work(double tokens) const;

  const GpuSpec* gpu_;
  const ModelSpec* model_;
  AnalyticalParams params_;
  AnalyticalTerms terms_;
  LayerShapes shapes_;
  TpTopology topo_;
  TpTopology group_topo_;  // one attention group's GPUs (topo_ without attention groups)
  bool moe_parallel_ = false;
  int attention_dp_ = 1;
  double peak_flops_per_ns_ = 0;       // projection GEMMs (FP8 peak for FP8 weights)
  double bf16_peak_flops_per_ns_ = 0;  // attention and unquantized GEMMs run in bf16/fp16
  int pp_ = 1;
  std::string topology_;
  ClusterSpec cluster_;  // the run's nodes: pipeline boundaries between nodes go by NIC
  double bw_ = 0;        // bytes per ns
  LightMemory light_memory_;
  double f_clk_ = 1;
  std::optional<PowerModel> power_;
  double cap_w_ = 0;
  double weight_bytes_ = 2;
  bool quantized_activations_ = false;  // the GEMMs' inputs are quantized first (fp8, nvfp4)
  double kv_bytes_ = 2;
  double full_vocab_ = 0;
  double decode_mma_padding_ = 1;  // tensor FLOPs executed per useful FLOP in decode attention
};

// A priced piece of a step: its time and its energy above idle on one GPU.
struct PricedNs {
  double ns = 0;
  double nj = 0;
};

// LayerPricer::edge_requests_ns (LM head + sampling) tabulated by request count, eager and in a
// CUDA graph, for the table-driven cost models; past the table it prices directly.
class RequestEdgeTable {
 public:
  RequestEdgeTable() = default;
  // Requests per step never exceed tokens per step; max_num_seqs keeps them far smaller.
  static constexpr std::size_t kMaxRequests = 1024;
  explicit RequestEdgeTable(const LayerPricer& pricer);
  // Its time (ns); its energy above idle added to `nj` when given.
  double ns(const LayerPricer& pricer, std::size_t requests, bool graph,
            double* nj = nullptr) const;

 private:
  std::vector<PricedNs> eager_;  // index = requests; entry 0 unused
  std::vector<PricedNs> graph_;
};

}  // namespace servesim
