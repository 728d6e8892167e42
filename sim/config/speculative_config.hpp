#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"

namespace servesim {

// How draft tokens are proposed: a separate draft model (any catalog model, run on the target's
// GPUs with its TP degree), or heads on the target (MTP, EAGLE) priced as a few target layers.
enum class SpeculativeMethod : std::int8_t { kDraft, kMtp, kEagle };
const char* speculative_method_name(SpeculativeMethod m);

// The `speculative:` section: speculative decoding on every replica of the run (vLLM V1's
// speculative_config). Absent: no speculation, and nothing of a run changes.
// Invariants after parse: 1 ≤ num_speculative_tokens ≤ kMaxSpeculativeTokens; acceptance has
// num_speculative_tokens entries in [0, 1], non-increasing; draft_model is set exactly for
// kDraft (resolved in the catalog when the run is built); draft_layers > 0.
struct SpeculativeConfig {
  static constexpr std::int64_t kMaxSpeculativeTokens = 64;

  ConfigNode node;
  SpeculativeMethod method = SpeculativeMethod::kDraft;
  std::string draft_model;
  std::int32_t num_speculative_tokens = 0;
  // P(draft position j is accepted), j = 1..k: a position counts only when every earlier one was
  // accepted, so these are the per-position rates vLLM reports (accepted at j / drafts). A single
  // per-token rate α gives α, α², …, α^k.
  std::vector<double> acceptance;
  // mtp / eagle: the heads' cost per draft token, in target decoder layers (the LM head is added).
  double draft_layers = 1.0;

  static SpeculativeConfig parse(const ConfigNode& node);
  // Expected accepted draft tokens of one step that proposes `drafts` (≤ k) tokens.
  double expected_accepted(std::int32_t drafts) const;
};

}  // namespace servesim
