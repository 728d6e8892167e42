#include "costmodels/common/attention_work.hpp"

#include <algorithm>

namespace servesim {

namespace {
// `w` becomes the mean layer of a share 1 − f like it and f like `other`.
void mix(AttentionWork& w, const AttentionWork& other, double f) {
  w.prefill_flops = (1 - f) * w.prefill_flops + f * other.prefill_flops;
  w.prefill_bytes = (1 - f) * w.prefill_bytes + f * other.prefill_bytes;
  w.decode_flops = (1 - f) * w.decode_flops + f * other.decode_flops;
  w.decode_bytes = (1 - f) * w.decode_bytes + f * other.decode_bytes;
}
}  // namespace

AttentionWork AttentionWork::of(const BatchShape& batch, const LayerShapes& s,
                                double kv_dtype_bytes) {
  AttentionWork w;
  const double qk = s.q_heads * s.head_dim;  // Q (and O) width
  const double kv = s.kv_width;              // cached K and V (or MLA latent) per token
  for (const PrefillChunk& p : batch.prefills) {
    const double c = p.tokens;
    const double keys = p.context_before + (c + 1) / 2;
    w.prefill_flops += 4 * c * keys * qk;
    w.prefill_bytes += (p.context_before + c) * kv * kv_dtype_bytes + 2 * c * qk * 2;
    w.prefill_chunks += 1;
  }
  // Each decode attends to its context and its new token. Summed as integers (exact below 2^53,
  // so equal to a sum of doubles) the loop vectorizes: it was the step's largest cost at 256.
  const double decodes = static_cast<double>(batch.decode_contexts.size());
  const double ctx_sum = static_cast<double>(batch.decode_context_sum()) + decodes;
  // MLA decode with absorbed weights: per head, scores over the latent + RoPE part and values
  // over the latent: 2·(2·kv_lora_rank + rope) FLOPs per context token.
  w.decode_flops = s.mla_latent > 0 ? 2 * ctx_sum * s.q_heads * (2 * s.mla_latent + s.mla_rope)
                                    : 4 * ctx_sum * qk;
  w.decode_bytes = ctx_sum * kv * kv_dtype_bytes + 2 * decodes * qk * 2;
  w.decodes = decodes;
  if (s.window_share > 0) {
    // The windowed layers' work, mixed with the full layers' by their share.
    AttentionWork win;
    for (const PrefillChunk& p : batch.prefills) {
      const double c = p.tokens;
      const double keys = std::min(p.context_before + (c + 1) / 2, s.window);
      win.prefill_flops += 4 * c * keys * qk;
      win.prefill_bytes +=
          std::min<double>(p.context_before + c, s.window + c) * kv * kv_dtype_bytes +
          2 * c * qk * 2;
    }
    double win_ctx = 0;
    for (const std::int32_t ctx : batch.decode_contexts) {
      win_ctx += std::min(static_cast<double>(ctx) + 1, s.window);
    }
    win.decode_flops = 4 * win_ctx * qk;
    win.decode_bytes = win_ctx * kv * kv_dtype_bytes + 2 * decodes * qk * 2;
    const double f = s.window_share;
    mix(w, win, f);
  }
  if (s.linear_share > 0) {
    // A linear-attention layer (Gated DeltaNet) reads and writes each request's state once per
    // step. Per token and value head, decode updates the key dim × value dim state and reads
    // it out (6 FLOPs per element); chunked prefill (chunks of 64) adds the chunk's
    // attention-like products, 2 · 64 · (key dim + value dim).
    const double kd = s.linear_key_dim;
    const double vd = s.linear_value_dim;
    const double state_bytes = 2 * s.linear_state * kv_dtype_bytes;
    const double io = (s.linear_in_width + s.linear_out_width) * 2;  // bf16 inputs and output
    AttentionWork lin;
    const double prefill_tokens = static_cast<double>(batch.prefill_tokens());
    lin.prefill_flops = prefill_tokens * s.linear_value_heads * (6 * kd * vd + 2 * 64 * (kd + vd));
    lin.prefill_bytes =
        static_cast<double>(batch.prefills.size()) * state_bytes + prefill_tokens * io;
    lin.decode_flops = decodes * s.linear_value_heads * 6 * kd * vd;
    lin.decode_bytes = decodes * (state_bytes + io);
    const double f = s.linear_share;
    mix(w, lin, f);
  }
  return w;
}

}  // namespace servesim
