#pragma once

#include "costmodels/common/layer_shapes.hpp"
#include "sim/engine/batch_shape.hpp"

namespace servesim {

// Attention work of one layer on one GPU for a batch, split by phase. FLOPs count the QK^T and
// PV products (2 GEMMs × 2 FLOP per MAC); a causal prefill chunk of c tokens after `ctx` cached
// ones attends to ctx + (c+1)/2 keys on average. Bytes count K and V read once per request
// (flash attention streams them) plus Q read and O written. With sliding-window layers the work
// is the mean layer's: a windowed layer attends to at most the window's keys (the chunk's own
// included) and reads only those; with linear-attention layers, the mean of a full layer's and a
// linear layer's (its state read and written once per request per step; attention_work.cpp).
struct AttentionWork {
  double prefill_flops = 0;
  double prefill_bytes = 0;
  double prefill_chunks = 0;
  double decode_flops = 0;
  double decode_bytes = 0;
  double decodes = 0;

  static AttentionWork of(const BatchShape& batch, const LayerShapes& s, double kv_dtype_bytes);
};

}  // namespace servesim
