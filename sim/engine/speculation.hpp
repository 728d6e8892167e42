#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/config/speculative_config.hpp"
#include "sim/engine/batch_shape.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// One speculating request of a step, as the drafter sees it: its cached context and how many
// draft tokens it proposes.
struct DraftSlot {
  std::int32_t context = 0;
  std::int32_t drafts = 0;
};

// Speculative decoding of one run (vLLM V1 semantics): which draws accept draft tokens, and the
// price of a step whose decodes verify drafts. Immutable after construction; `draft_model` (the
// catalog's, for method draft) must outlive it.
//
// Pricing: a speculative step costs the target's pass, in which each speculating request is a
// chunk of 1 + drafts query tokens after its cached context (the verify), plus one drafter pass
// per draft position j over the requests that propose more than j tokens, each a decode at
// context + j. A draft model's pass is priced by the same cost model with the draft model on
// the replica's GPUs and TP degree; MTP/EAGLE heads as draft_layers of the target's decoder
// layers plus its LM head. The drafter also reads every real prefill chunk of the step (it
// needs the prompt's KV to draft), priced as one more drafter pass over those chunks. Drafter
// passes run inside the target's step: their host time
// (scheduling, launch floor) is not paid again. A step whose only chunks are verifies is a
// uniform decode batch, which vLLM replays from CUDA graphs: it is priced with piecewise graphs
// (attention outside the graph) wherever the replica uses graphs.
class Speculation {
 public:
  Speculation(SpeculativeConfig config, const ModelSpec* draft_model, std::uint64_t seed);

  std::int32_t num_speculative_tokens() const { return config_.num_speculative_tokens; }
  const SpeculativeConfig& config() const { return config_; }
  // Draft tokens of `r`'s verify that are accepted, of `drafts` proposed: one seeded uniform
  // draw per (request, speculative step), compared with the per-position rates, so a run is
  // deterministic for its seed whatever the order requests are stepped in.
  std::int32_t accepted(const Request& r, std::int32_t drafts) const;
  // The price of a step of `shape` on `replica` whose prefill chunks are the verifies of
  // `drafts` and the real prefill chunks `prefills`.
  StepCost step(const CostModel& model, const BatchShape& shape, std::span<const DraftSlot> drafts,
                std::span<const PrefillChunk> prefills, const ReplicaSpec& replica) const;
  // The drafter's share of a replica's memory: its weights per GPU, and the bytes its KV adds
  // to each block of `block_bytes` holding the target's `layers` layers (vLLM gives the drafter
  // the target's block table). A draft model is planned like a target at the replica's TP
  // degree; MTP/EAGLE heads as draft_layers decoder layers of the target.
  struct Memory {
    double weight_bytes = 0;
    double block_bytes = 0;
  };
  Memory memory(const ReplicaSpec& replica, double gpu_memory_utilization, std::int32_t block_size,
                std::int32_t max_num_batched_tokens, std::int32_t max_num_seqs) const;

 private:
  SpeculativeConfig config_;
  const ModelSpec* draft_model_ = nullptr;  // method draft only
  std::uint64_t seed_ = 0;
};

}  // namespace servesim
