#include "costmodels/analytical/layer_pricer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "costmodels/analytical/gemm_model.hpp"
#include "sim/util/units.hpp"

namespace servesim {

double light_kernel_ns(const AnalyticalParams::Light& l, const LightWork& w, const LightMemory& m,
                       double row_slots, double knee_q, const AnalyticalTerms& terms,
                       double launch_scale) {
  const double rate = m.bw * (terms.light ? light_stream_fraction(l.bw_fraction, m, knee_q) : 1.0);
  const double hit = terms.light_l2 ? std::min(w.reuse_bytes, m.l2_resident_bytes) : 0.0;
  const double t_bw = (w.bytes - hit) / rate + hit / (rate * m.l2_speedup);
  if (!terms.launch) return t_bw;
  double t_lat = l.floor_ns * launch_scale;
  if (terms.row_walk && l.row_elem_ns > 0 && w.row_elems > 0 && w.rows > 0) {
    t_lat += l.row_elem_ns * w.row_elems * std::ceil(w.rows / row_slots);
  }
  return terms.knee ? knee_ns(t_lat, t_bw, knee_q) : t_lat + t_bw;
}

double light_stream_fraction(double f, const LightMemory& m, double q) {
  if (m.sm_ratio <= 1 || f >= m.eta) return f;
  const double sm_home = 1 / std::pow(std::pow(f, -q) - std::pow(m.eta, -q), 1 / q);
  return 1 / std::pow(std::pow(m.eta, -q) + std::pow(sm_home * m.sm_ratio, -q), 1 / q);
}

// HBM parts sit within a few per cent of the A100 home's DRAM bytes per SM clock (H100 SXM
// 1.04x its SM clocks per byte, H200 0.73x, B200 0.49x), GDDR parts far above (A40 2.8x, L40S
// 5.5x): below this ratio the law is not applied. Chosen after the symmetric law moved the
// H100 check (6.64 -> 6.75% MLP-block MAPE) and the H200 table (11.85 -> 15.10%); disclosed in
// doc/physics.md.
constexpr double kMinLightSmRatio = 1.25;

LightMemory light_memory(const GpuSpec& gpu, const AnalyticalParams& p) {
  LightMemory m{gpu.memory_bw_gb_per_s, p.light_l2_resident_fraction * gpu.l2_bytes(),
                p.light_l2_speedup, p.eta_max, 0};
  const double sm_ghz = gpu.sms * gpu.boost_clock_mhz * kGhzPerMhz * p.clock_fraction;
  if (p.light_home_bytes_per_sm_clk > 0 && sm_ghz > 0 && gpu.memory_bw_gb_per_s > 0) {
    const double ratio = p.light_home_bytes_per_sm_clk / (gpu.memory_bw_gb_per_s / sm_ghz);
    if (ratio > kMinLightSmRatio) m.sm_ratio = ratio;
  }
  return m;
}

double row_slots(const GpuSpec& gpu, const AnalyticalParams& p) {
  return static_cast<double>(gpu.sms) * p.row_ctas_per_sm;
}

LayerPricer::LayerPricer(const ReplicaSpec& r, const AnalyticalParams& params,
                         const AnalyticalTerms& terms)
    : gpu_(r.gpu),
      model_(r.model),
      params_(params),
      terms_(terms),
      shapes_(LayerShapes::make(*r.model, r.tp, r.attention_dp, r.moe_ep)),
      topo_(r.tp, r.links(), *r.gpu, params),
      group_topo_(r.attention_tp(), r.links(), *r.gpu, params),
      moe_parallel_(r.moe_parallel() && r.model->is_moe()),
      attention_dp_(r.attention_dp),
      pp_(r.pp),
      topology_(r.links()),
      cluster_(r.cluster) {
  peak_flops_per_ns_ = gpu_->gemm_flop_per_ns(r.weights);
  bf16_peak_flops_per_ns_ = gpu_->bf16_flop_per_ns();  // attention, unquantized LM head and router
  bw_ = gpu_->memory_bw_gb_per_s;
  light_memory_ = light_memory(*gpu_, params_);
  // With the hardware file's power model, under a cap below the TDP every GEMM and
  // attention kernel is priced at the ratio of the clock its own activity settles at under the
  // cap to its clock at the TDP. Without one, every kernel runs at the file's clock fraction,
  // pulled down under a lower cap as P ∝ f³ (the placeholder law).
  power_ = PowerModel::for_gpu(*gpu_);
  cap_w_ = r.effective_power_cap_w();
  f_clk_ = params_.clock_fraction;
  const double tdp = gpu_->tdp_w;
  if (!power_ && tdp > 0 && cap_w_ > 0 && cap_w_ < tdp) f_clk_ *= std::cbrt(cap_w_ / tdp);
  weight_bytes_ = r.weight_bytes_per_param();
  quantized_activations_ = r.weights == Precision::kFp8 || r.weights == Precision::kFp8Block ||
                           r.weights == Precision::kNvfp4;
  kv_bytes_ = r.kv_dtype_bytes;
  full_vocab_ = r.model->vocab_size;
  // A decode query's GQA group (q heads per KV head) fills `decode_attn_mma_rows` rows of each
  // MMA tile; the rest of the tile is padding the tensor cores execute all the same.
  const double group = shapes_.kv_heads > 0 ? shapes_.q_heads / shapes_.kv_heads : 1.0;
  if (params_.decode_attn_mma_rows > 0 && shapes_.mla_latent <= 0) {
    decode_mma_padding_ = std::max(1.0, params_.decode_attn_mma_rows / std::max(1.0, group));
  }
}

double LayerPricer::dynamic_w(double flops, double peak, double bytes, double ns) const {
  if (!power_ || ns <= 0) return 0;
  const PowerModel& pm = *power_;
  const double m = std::min(1.0, bytes / (ns * bw_));
  // Tensor activity against the peak at f_max, then at the clock it settles at.
  const double u_max = flops / (ns * peak * pm.max_clock_mhz / pm.boost_clock_mhz);
  const double u_top = std::min(1.0, u_max);
  const PowerModel::CapClock clock = pm.settle_under_cap(cap_w_, u_top, m);
  const double f = clock.f_mhz;
  const double u = std::min(1.0, u_max * pm.max_clock_mhz / f);
  // At the top clock with the activity the clock was found for, its power is already known.
  double w = f == pm.max_clock_mhz && u == u_top ? clock.top_w : pm.board_w(f, u, m);
  if (f > pm.min_clock_mhz) w = std::min(w, cap_w_);
  return w - pm.idle_w;
}

double LayerPricer::gemm_at(const GemmShape& g, double wbytes, double peak, bool graph,
                            double* nj) const {
  const double t =
      capped() ? gemm_under_cap(g, wbytes, peak, f_clk_, *power_, cap_w_, *gpu_, params_, terms_,
                                launch_scale(graph))
                     .time_ns
               : gemm_ns(g, wbytes, peak, f_clk_, *gpu_, params_, terms_, launch_scale(graph));
  return tally(nj, t, g.flops(), peak, g.bytes(wbytes));
}

double LayerPricer::gemm(const GemmShape& g, bool graph, double* nj) const {
  return gemm_at(g, weight_bytes_, peak_flops_per_ns_, graph, nj);
}

double LayerPricer::unquantized_gemm(const GemmShape& g, bool graph, double* nj) const {
  return gemm_at(g, 2, bf16_peak_flops_per_ns_, graph, nj);
}

double LayerPricer::mla_qkv_ns(double tokens, bool graph, double* nj) const {
  double t = 0;
  for (const GemmShape& g : shapes_.mla_qkv_gemms(tokens)) {
    t += model_->fp8_skips_attention ? unquantized_gemm(g, graph, nj) : gemm(g, graph, nj);
  }
  return t;
}

double LayerPricer::with_linear(ProjOp op, double tokens, bool graph, double full,
                                double* nj) const {
  double e = 0;
  const GemmShape g = shapes_.linear_gemm(op, tokens);
  const double linear =
      model_->fp8_skips_attention ? unquantized_gemm(g, graph, &e) : gemm(g, graph, &e);
  const double f = shapes_.linear_share;
  if (nj != nullptr) *nj = (1 - f) * *nj + f * e;
  return (1 - f) * full + f * linear;
}

double LayerPricer::proj_ns(ProjOp op, double tokens, bool graph, double* nj) const {
  const bool attention = op == ProjOp::kQkv || op == ProjOp::kO;
  double e = 0;  // this op's energy, mixed across layer kinds as its time is
  double* en = nj != nullptr ? &e : nullptr;
  double t = op == ProjOp::kQkv && shapes_.mla_latent > 0 ? mla_qkv_ns(tokens, graph, en)
             : attention && model_->fp8_skips_attention
                 ? unquantized_gemm(shapes_.expert_gemm(op, tokens), graph, en)
                 : gemm(shapes_.expert_gemm(op, tokens), graph, en);
  if (attention && shapes_.linear_share > 0) t = with_linear(op, tokens, graph, t, en);
  if (shapes_.experts > 0 && op == ProjOp::kGateUp) {
    t += unquantized_gemm({tokens, shapes_.hidden, shapes_.experts, 1}, graph, en);  // router
  }
  if (shapes_.shared_inter > 0 && (op == ProjOp::kGateUp || op == ProjOp::kDown)) {
    const double up = model_->gated_mlp ? 2 * shapes_.shared_inter : shapes_.shared_inter;
    t += op == ProjOp::kGateUp ? gemm({tokens, shapes_.hidden, up, 1}, graph, en)
                               : gemm({tokens, shapes_.shared_inter, shapes_.hidden, 1}, graph, en);
  }
  if (shapes_.interleaved() && (op == ProjOp::kGateUp || op == ProjOp::kDown)) {
    double e_dense = 0;
    t = shapes_.mean_layer(
        t, gemm(shapes_.dense_mlp_gemm(op, tokens), graph, en != nullptr ? &e_dense : nullptr));
    e = shapes_.mean_layer(e, e_dense);
  }
  if (nj != nullptr) *nj += e;
  return t;
}

// A light kernel at its own clock: its latency-bound part (launch floor and row walk) is clocked
// work, its stream is DRAM's; the constants hold at the file's clock fraction, so a clock x
// scales the latency by clock_fraction / x and leaves the stream as it is.
double LayerPricer::light_ns(LightKernel k, const LightWork& w, bool graph, double* nj) const {
  const AnalyticalParams::Light& l = params_.light[static_cast<std::size_t>(k)];
  const auto at = [&](double x) {
    AnalyticalParams::Light clocked = l;
    const double slow = params_.clock_fraction / x;
    clocked.floor_ns *= slow;
    clocked.row_elem_ns *= slow;
    LightMemory mem = light_memory_;
    mem.sm_ratio /= slow;  // the SM side is clocked work too
    return light_kernel_ns(clocked, w, mem, row_slots(*gpu_, params_), params_.knee_q, terms_,
                           launch_scale(graph));
  };
  const double t = clocked_ns(0, bf16_peak_flops_per_ns_, w.bytes, at);
  return tally(nj, t, 0, bf16_peak_flops_per_ns_, w.bytes);
}

LightKernel LayerPricer::norm_kernel() const {
  return model_->layer_norm ? LightKernel::kLayerNorm : LightKernel::kRmsNorm;
}
LightKernel LayerPricer::act_kernel() const {
  return model_->gated_mlp ? LightKernel::kSiluMul : LightKernel::kGelu;
}
// Norms and RoPE run one CTA per token over its row (hidden; q and k heads); SiLU-and-mul too
// (over the intermediate width). GELU is priced as the elementwise kernel the profiles time.
// A norm reads the residual stream the op before it just wrote (an add, the embedding).
LightWork LayerPricer::norm_work(double tokens) const {
  return {4 * tokens * shapes_.hidden, tokens, shapes_.hidden, 2 * tokens * shapes_.hidden};
}
LightWork LayerPricer::act_work(double tokens) const {
  // Fused MoE activates a (tokens·k) × 2·inter tensor: one row per (token, routed expert).
  if (shapes_.experts > 0) {
    return act_work(tokens * std::min(shapes_.experts, shapes_.top_k), shapes_.inter);
  }
  return act_work(tokens, shapes_.inter);
}
LightWork LayerPricer::act_work(double rows, double inter) const {
  // Its input is the up-projection GEMM's output, priced from DRAM: with the norms' L2 reuse it
  // fits the A100 profile worse (SiLU-and-mul 5.31 -> 7.04% MAPE, GELU 3.78 -> 8.46%).
  if (!model_->gated_mlp) return {4 * rows * inter, rows, 0};
  return {6 * rows * inter, rows, inter};
}
double LayerPricer::act_ns(double tokens, bool graph, double* nj) const {
  double e = 0;
  double* en = nj != nullptr ? &e : nullptr;
  double t = light_ns(act_kernel(), act_work(tokens), graph, en);
  if (shapes_.shared_inter > 0) {  // the shared expert's own activation
    t += light_ns(act_kernel(), act_work(tokens, shapes_.shared_inter), graph, en);
  }
  if (shapes_.interleaved()) {
    double e_dense = 0;
    t = shapes_.mean_layer(t, light_ns(act_kernel(), act_work(tokens, shapes_.dense_inter), graph,
                                       en != nullptr ? &e_dense : nullptr));
    e = shapes_.mean_layer(e, e_dense);
  }
  if (nj != nullptr) *nj += e;
  return t;
}

// Elementwise kernels: no row to walk.
LightWork LayerPricer::add_work(double tokens) const {
  // Of its two inputs, the projection output was just written; the residual is older.
  return {6 * tokens * shapes_.hidden, tokens, 0, 2 * tokens * shapes_.hidden};
}
LightWork LayerPricer::embedding_work(double tokens) const {
  // It gathers table rows: no input from the kernel before.
  return {4 * tokens * shapes_.hidden, tokens, 0};
}

LightWork LayerPricer::kv_write_work(double tokens) const {
  // kv_width counts K and V (or the MLA latent); the kernel reads them and writes the cache. Its
  // constants are an ncu measurement of the whole kernel on the A100: no L2 reuse on top.
  return {2 * tokens * shapes_.kv_width * kv_bytes_, tokens, shapes_.kv_width};
}
LightWork LayerPricer::rope_work(double tokens) const {
  // Q and K heads; with MLA only the decoupled RoPE part: every q head's and the one shared k.
  const double row = shapes_.mla_latent > 0
                         ? (shapes_.q_heads + 1) * shapes_.mla_rope
                         : (shapes_.q_heads + shapes_.kv_heads) * shapes_.head_dim;
  // Q and K, the QKV projection's output, rotated in place; priced from DRAM (with the norms' L2
  // reuse the A100 fit is worse: 8.72 -> 9.66% MAPE).
  return {4 * tokens * row, tokens, row};
}

double LayerPricer::all_reduce_ns(double bytes) const { return topo_.all_reduce_ns(bytes); }

// vLLM's IntermediateTensors between stages: the hidden states and the residual, 16-bit.
double LayerPricer::stage_handoff_bytes(double tokens) const {
  return 2 * tokens * shapes_.hidden * 2;
}

// Collectives and stage transfers are priced as SMs copying with no tensor or DRAM activity
// counted (NVLink and NIC power are not modelled).
double LayerPricer::stage_boundary_ns(double tokens, int stage) const {
  if (!terms_.collectives) return 0;
  return pipeline_boundary_ns(topo_, pp_, stage, topology_, *gpu_, cluster_,
                              stage_handoff_bytes(tokens));
}

double LayerPricer::final_norm_ns(double tokens, bool graph) const {
  return light_ns(norm_kernel(), norm_work(tokens), graph, nullptr);
}

double LayerPricer::stage_transfers_ns(double tokens, double* nj) const {
  // One stage has no boundary to send across (and its zero-time tally adds no energy).
  if (!terms_.collectives || pp_ <= 1) return 0;
  const double t =
      pipeline_transfers_ns(topo_, pp_, topology_, *gpu_, cluster_, stage_handoff_bytes(tokens));
  return tally(nj, t, 0, bf16_peak_flops_per_ns_, 0);
}

LayerPricer::LayerCost LayerPricer::layer_ns(double tokens, bool graph) const {
  if (moe_parallel_) {
    LayerCost c = group_side_ns(tokens, graph);
    const LayerCost x = expert_side_ns(tokens, graph);
    c.gemm += x.gemm;
    c.light += x.light;
    c.comm += x.comm;
    c.energy_nj += x.energy_nj;
    return c;
  }
  LayerCost c;
  double* nj = power_ ? &c.energy_nj : nullptr;
  for (std::size_t i = 0; i < kNumProjOps; ++i)
    c.gemm += proj_ns(static_cast<ProjOp>(i), tokens, graph, nj);
  const double h = shapes_.hidden;
  const double norms = model_->parallel_block ? 1 : 2;
  double norm_nj = 0;
  c.light += norms * light_ns(norm_kernel(), norm_work(tokens), graph, nj ? &norm_nj : nullptr);
  c.energy_nj += norms * norm_nj;
  c.light += light_ns(LightKernel::kRope, rope_work(tokens), graph, nj);
  c.light += act_ns(tokens, graph, nj);
  if (shapes_.experts > 0) {
    double route_nj = 0;
    double* rn = nj != nullptr ? &route_nj : nullptr;
    c.light += shapes_.moe_fraction *
               (route_select_ns(tokens, graph, rn) + route_dispatch_ns(tokens, graph, rn));
    c.energy_nj += shapes_.moe_fraction * route_nj;
  }
  c.light += light_ns(LightKernel::kAdd, add_work(tokens), graph, nj);
  c.light += light_ns(LightKernel::kKvWrite, kv_write_work(tokens), graph, nj);
  if (terms_.collectives) {
    double ar_nj = 0;
    c.comm = 2 * tally(nj ? &ar_nj : nullptr, all_reduce_ns(tokens * h * 2), 0,
                       bf16_peak_flops_per_ns_, 0);
    c.energy_nj += 2 * ar_nj;
  }
  return c;
}

LayerPricer::LayerCost LayerPricer::group_side_ns(double tokens, bool graph) const {
  LayerCost c;
  double* nj = power_ ? &c.energy_nj : nullptr;
  const bool fp8_attn = model_->fp8_skips_attention;
  for (const ProjOp op : {ProjOp::kQkv, ProjOp::kO}) {
    const GemmShape g = shapes_.gemm(op, tokens);
    double e = 0;
    double* en = nj != nullptr ? &e : nullptr;
    double t = op == ProjOp::kQkv && shapes_.mla_latent > 0 ? mla_qkv_ns(tokens, graph, en)
               : fp8_attn                                   ? unquantized_gemm(g, graph, en)
                                                            : gemm(g, graph, en);
    if (shapes_.linear_share > 0) t = with_linear(op, tokens, graph, t, en);
    c.gemm += t;
    c.energy_nj += e;
  }
  // The MLP work a group runs on its own tokens, in the share of layers it belongs to: the
  // router and shared expert of an MoE layer, the whole MLP of a dense one.
  const double f = shapes_.moe_fraction;
  double moe_e = 0, dense_e = 0;
  double* me = nj != nullptr ? &moe_e : nullptr;
  double* de = nj != nullptr ? &dense_e : nullptr;
  double moe = unquantized_gemm({tokens, shapes_.hidden, shapes_.experts, 1}, graph, me) +
               route_select_ns(tokens, graph, me);
  if (shapes_.shared_inter > 0) {
    const double up = model_->gated_mlp ? 2 * shapes_.shared_inter : shapes_.shared_inter;
    moe += gemm({tokens, shapes_.hidden, up, 1}, graph, me) +
           gemm({tokens, shapes_.shared_inter, shapes_.hidden, 1}, graph, me);
    moe += light_ns(act_kernel(), act_work(tokens, shapes_.shared_inter), graph, me);
  }
  double dense = 0;
  if (f < 1) {
    dense = gemm(shapes_.dense_mlp_gemm(ProjOp::kGateUp, tokens), graph, de) +
            gemm(shapes_.dense_mlp_gemm(ProjOp::kDown, tokens), graph, de) +
            light_ns(act_kernel(), act_work(tokens, shapes_.dense_inter), graph, de);
  }
  c.gemm += f * moe + (1 - f) * dense;
  c.energy_nj += f * moe_e + (1 - f) * dense_e;
  const double norms = model_->parallel_block ? 1 : 2;
  double norm_nj = 0;
  c.light += norms * light_ns(norm_kernel(), norm_work(tokens), graph, nj ? &norm_nj : nullptr);
  c.energy_nj += norms * norm_nj;
  c.light += light_ns(LightKernel::kRope, rope_work(tokens), graph, nj);
  c.light += light_ns(LightKernel::kAdd, add_work(tokens), graph, nj);
  c.light += light_ns(LightKernel::kKvWrite, kv_write_work(tokens), graph, nj);
  if (terms_.collectives) {
    // The attention output's all-reduce inside the group and the MLP's: a dense layer's, and
    // with attention groups the shared expert's (without them the MoE layer's MLP output is
    // reduced once, after the experts: expert_side_ns).
    double ar_nj = 0;
    const double ar = tally(nj != nullptr ? &ar_nj : nullptr,
                            group_topo_.all_reduce_ns(tokens * shapes_.hidden * 2), 0,
                            bf16_peak_flops_per_ns_, 0);
    const double n = attention_dp_ > 1 ? 2 : 2 - f;
    c.comm += n * ar;
    c.energy_nj += n * ar_nj;
  }
  return c;
}

LayerPricer::LayerCost LayerPricer::expert_side_ns(double tokens, bool graph) const {
  LayerCost c;
  double* nj = power_ ? &c.energy_nj : nullptr;
  const double f = shapes_.moe_fraction;
  double e = 0;
  double* en = nj != nullptr ? &e : nullptr;
  const double experts = gemm(shapes_.expert_gemm(ProjOp::kGateUp, tokens), graph, en) +
                         gemm(shapes_.expert_gemm(ProjOp::kDown, tokens), graph, en);
  const double act =
      light_ns(act_kernel(), act_work(shapes_.expert_rows(tokens), shapes_.inter), graph, en) +
      route_dispatch_ns(tokens, graph, en);
  c.gemm = f * experts;
  c.light = f * act;
  if (terms_.collectives) {
    const double bytes = tokens * shapes_.hidden * 2;
    // Attention groups: the groups' tokens gathered onto every GPU before the experts and their
    // outputs reduce-scattered back after (vLLM's allgather_reducescatter, SGLang's DP-attention
    // gather): a ring all-gather each way. Else the experts' partial sums are all-reduced.
    const double t =
        attention_dp_ > 1 ? 2 * topo_.all_gather_ns(bytes) : topo_.all_reduce_ns(bytes);
    c.comm = f * tally(en, t, 0, bf16_peak_flops_per_ns_, 0);
  }
  if (nj != nullptr) *nj += f * e;
  return c;
}

double LayerPricer::route_select_ns(double tokens, bool graph, double* nj) const {
  const double logits = tokens * shapes_.experts * 4;  // fp32, as the router GEMM wrote them
  return light_ns(norm_kernel(),
                  {logits + tokens * shapes_.top_k * 8, tokens, shapes_.experts, logits}, graph,
                  nj);
}

double LayerPricer::route_dispatch_ns(double tokens, bool graph, double* nj) const {
  const double pairs = tokens * shapes_.top_k;
  const double rows = shapes_.expert_rows(tokens);
  const double h = shapes_.hidden;
  double t = light_ns(LightKernel::kAdd, {3 * pairs * 4, pairs, 0, pairs * 4}, graph, nj);
  if (quantized_activations_) {
    t += light_ns(norm_kernel(), {3 * tokens * h, tokens, h, 2 * tokens * h}, graph, nj);
    t += light_ns(norm_kernel(),
                  {3 * rows * shapes_.inter, rows, shapes_.inter, 2 * rows * shapes_.inter}, graph,
                  nj);
  }
  return t + light_ns(LightKernel::kAdd, {2 * rows * h + 2 * tokens * h, tokens, 0, 2 * rows * h},
                      graph, nj);
}

double LayerPricer::attention_ns(const AttentionWork& w, bool graph, double* nj) const {
  const bool eff_on = terms_.attention && terms_.efficiency;
  const double frac = terms_.attention ? params_.decode_attn_bw_fraction : 1.0;
  const double floor = terms_.attention && terms_.launch ? params_.attn_floor_ns : 0.0;
  const double peak = bf16_peak_flops_per_ns_;
  // Each part (prefill, decode) at its own clock: compute at eff·x of the peak, or the stream.
  // `mma` of the FLOPs the tensor cores execute (padding included) draw power; `flops` time it.
  auto part = [&](double flops, double bytes, double launch, double mma) {
    return tally(nj,
                 clocked_ns(mma, peak, bytes,
                            [&](double x) {
                              const double eff = eff_on ? params_.prefill_attn_efficiency * x : 1.0;
                              return launch + std::max(flops / (peak * eff), bytes / (bw_ * frac));
                            }),
                 mma, peak, bytes);
  };
  double t = 0;
  if (w.prefill_chunks > 0) t += part(w.prefill_flops, w.prefill_bytes, floor, w.prefill_flops);
  if (w.decodes > 0) {
    t += part(w.decode_flops, w.decode_bytes, floor * launch_scale(graph),
              w.decode_flops * decode_mma_padding_);
  }
  return t;
}

double LayerPricer::edge_tokens_ns(double tokens, bool graph, double* nj) const {
  return light_ns(LightKernel::kEmbedding, embedding_work(tokens), graph, nj) +
         light_ns(norm_kernel(), norm_work(tokens), graph, nj);
}

double LayerPricer::edge_requests_ns(double requests, bool graph, double* nj) const {
  return unquantized_gemm({requests, shapes_.hidden, shapes_.vocab, 1}, graph, nj) +
         light_ns(LightKernel::kSampling,
                  {requests * full_vocab_ * params_.sampler_bytes_per_entry(), requests, 0}, graph,
                  nj);
}

double LayerPricer::host_ns(double requests, bool graph) const {
  if (!terms_.host) return 0;
  return (graph ? params_.host_graph_floor_ns : params_.host_eager_floor_ns) +
         params_.host_slope_ns * std::max(0.0, requests - 1);
}

std::array<LayerPricer::LightUse, kNumVidurOps> LayerPricer::vidur_light_uses(double tokens) const {
  std::array<LightUse, kNumVidurOps> u{};
  auto set = [&u](VidurOp op, LightKernel k, const LightWork& w, double count) {
    u[static_cast<std::size_t>(op)] = {k, w, count};
  };
  set(VidurOp::kEmb, LightKernel::kEmbedding, embedding_work(tokens), 1);
  set(VidurOp::kInputLayernorm, norm_kernel(), norm_work(tokens), 1);
  set(VidurOp::kAttnRope, LightKernel::kRope, rope_work(tokens), 1);
  set(VidurOp::kPostAttentionLayernorm, norm_kernel(), norm_work(tokens),
      model_->parallel_block ? 0 : 1);
  set(VidurOp::kMlpAct, act_kernel(), act_work(tokens), 1);
  set(VidurOp::kAdd, LightKernel::kAdd, add_work(tokens), model_->parallel_block ? 2 : 1);
  return u;
}

std::array<double, kNumVidurOps> LayerPricer::vidur_ops_ns(double tokens) const {
  std::array<double, kNumVidurOps> t{};
  const auto uses = vidur_light_uses(tokens);
  const auto act = static_cast<std::size_t>(VidurOp::kMlpAct);
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    if (uses[i].count <= 0) {
      t[i] = std::numeric_limits<double>::quiet_NaN();
    } else {  // the activation as the layer prices it (MoE/dense mix, shared expert)
      t[i] = i == act ? act_ns(tokens, false)
                      : uses[i].count * light_ns(uses[i].kernel, uses[i].work, false);
    }
  }
  t[static_cast<std::size_t>(VidurOp::kAttnPreProj)] = proj_ns(ProjOp::kQkv, tokens, false);
  t[static_cast<std::size_t>(VidurOp::kAttnPostProj)] = proj_ns(ProjOp::kO, tokens, false);
  t[static_cast<std::size_t>(VidurOp::kMlpUpProj)] = proj_ns(ProjOp::kGateUp, tokens, false);
  t[static_cast<std::size_t>(VidurOp::kMlpDownProj)] = proj_ns(ProjOp::kDown, tokens, false);
  return t;
}

RequestEdgeTable::RequestEdgeTable(const LayerPricer& pricer)
    : eager_(kMaxRequests + 1), graph_(kMaxRequests + 1) {
  for (std::size_t i = 1; i <= kMaxRequests; ++i) {
    for (const bool g : {false, true}) {
      PricedNs& e = (g ? graph_ : eager_)[i];
      e.ns = pricer.edge_requests_ns(static_cast<double>(i), g, &e.nj);
    }
  }
}

double RequestEdgeTable::ns(const LayerPricer& pricer, std::size_t requests, bool graph,
                            double* nj) const {
  const auto& t = graph ? graph_ : eager_;
  if (requests >= t.size())
    return pricer.edge_requests_ns(static_cast<double>(requests), graph, nj);
  if (nj != nullptr) *nj += t[requests].nj;
  return t[requests].ns;
}

}  // namespace servesim
