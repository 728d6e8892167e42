#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

// One prefill chunk in a step: `tokens` new prompt tokens whose KV is written after
// `context_before` tokens already cached.
struct PrefillChunk {
  std::int32_t tokens = 0;
  std::int32_t context_before = 0;
};

// The tokens of one LoRA adapter in a step (multi-LoRA runs only).
struct LoraSlice {
  std::int32_t adapter = 0;
  std::int32_t tokens = 0;
};

// What a cost model sees of one engine step. Invariant: every prefill has tokens ≥ 1; every
// decode context is the number of tokens already cached (the new token attends to context + 1).
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  std::vector<std::int32_t> decode_contexts;
  // Multi-LoRA runs: each distinct adapter of the step with its tokens (prefill and decode);
  // empty otherwise. clear() leaves it: the engine fills it afresh in such runs.
  std::vector<LoraSlice> lora;

  void clear() {
    prefills.clear();
    decode_contexts.clear();
  }
  std::int64_t prefill_tokens() const {
    std::int64_t n = 0;
    for (const auto& p : prefills) n += p.tokens;
    return n;
  }
  std::int64_t total_tokens() const { return prefill_tokens() + num_decodes(); }
  std::int64_t num_decodes() const { return static_cast<std::int64_t>(decode_contexts.size()); }
  std::int64_t num_requests() const {
    return static_cast<std::int64_t>(prefills.size() + decode_contexts.size());
  }
  // Inline: cost models call it every step, and the integer sum vectorizes.
  std::int64_t decode_context_sum() const {
    std::int64_t n = 0;
    for (const std::int32_t c : decode_contexts) n += c;
    return n;
  }
  bool empty() const { return prefills.empty() && decode_contexts.empty(); }
};

}  // namespace servesim
