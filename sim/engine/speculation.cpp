#include "sim/engine/speculation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/hardware/memory_planner.hpp"
#include "sim/util/splitmix.hpp"

namespace servesim {

Speculation::Speculation(SpeculativeConfig config, const ModelSpec* draft_model, std::uint64_t seed)
    : config_(std::move(config)), draft_model_(draft_model), seed_(seed) {
  if (config_.method == SpeculativeMethod::kDraft && draft_model_ == nullptr) {
    throw std::invalid_argument("speculative decoding with a draft model needs its spec");
  }
}

std::int32_t Speculation::accepted(const Request& r, std::int32_t drafts) const {
  // splitmix64 of (seed, request, its speculative step): a uniform u in [0, 1).
  const std::uint64_t z = seed_ + kGoldenGamma * (static_cast<std::uint64_t>(r.id) + 1);
  const double u =
      unit_draw(mix64(z ^ static_cast<std::uint64_t>(r.spec_steps) * 0xD1B54A32D192ED03ULL));
  // Position j is accepted when u < P(j accepted): the rates do not increase, so the accepted
  // positions are a prefix and P(at least j accepted) is the j-th rate.
  std::int32_t a = 0;
  while (a < drafts && u < config_.acceptance[static_cast<std::size_t>(a)]) ++a;
  return a;
}

namespace {
void add_pass(StepCost& total, const StepCost& pass, double scale_layers, double keep_embedding) {
  // The pass without its host time, its decoder-layer parts scaled by `scale_layers`.
  const double host = pass[CostComponent::kHost];
  const double embedding = pass[CostComponent::kEmbedding];
  const double layers = static_cast<double>(pass.total_ns) - host - embedding;
  const double ns = std::max(0.0, layers * scale_layers + embedding * keep_embedding);
  const double all = static_cast<double>(pass.total_ns);
  for (std::size_t c = 0; c < kNumCostComponents; ++c) {
    if (c == static_cast<std::size_t>(CostComponent::kHost)) continue;
    const double keep =
        c == static_cast<std::size_t>(CostComponent::kEmbedding) ? keep_embedding : scale_layers;
    total.breakdown_ns[c] += pass.breakdown_ns[c] * keep;
  }
  total.total_ns += std::llround(ns);
  if (all > 0) total.energy_j += pass.energy_j * ns / all;
}
}  // namespace

StepCost Speculation::step(const CostModel& model, const BatchShape& shape,
                           std::span<const DraftSlot> drafts,
                           std::span<const PrefillChunk> prefills,
                           const ReplicaSpec& replica) const {
  StepCost cost;
  if (prefills.empty() && replica.cuda_graphs &&
      replica.cuda_graph_mode == CudaGraphMode::kDecodeOnly) {
    ReplicaSpec graphed = replica;
    graphed.cuda_graph_mode = CudaGraphMode::kPiecewise;
    cost = model.step(shape, graphed);
  } else {
    cost = model.step(shape, replica);
  }
  const bool heads = config_.method != SpeculativeMethod::kDraft;
  ReplicaSpec drafter = replica;
  if (!heads) drafter.model = draft_model_;
  const double layer_scale =
      heads ? config_.draft_layers / std::max(1, replica.model->num_layers) : 1.0;
  BatchShape pass;
  for (std::int32_t j = 0; j < config_.num_speculative_tokens; ++j) {
    pass.clear();
    for (const DraftSlot& d : drafts) {
      if (d.drafts > j) pass.decode_contexts.push_back(d.context + j);
    }
    if (pass.empty()) break;
    add_pass(cost, model.step(pass, drafter), layer_scale, 1.0);
  }
  if (!prefills.empty()) {
    pass.clear();
    pass.prefills.assign(prefills.begin(), prefills.end());
    add_pass(cost, model.step(pass, drafter), layer_scale, 1.0);
  }
  return cost;
}

Speculation::Memory Speculation::memory(const ReplicaSpec& replica, double gpu_memory_utilization,
                                        std::int32_t block_size,
                                        std::int32_t max_num_batched_tokens,
                                        std::int32_t max_num_seqs) const {
  Memory out;
  if (config_.method == SpeculativeMethod::kDraft) {
    // The draft model whole on every GPU of the replica's first stage, at its TP degree.
    ReplicaSpec drafter = replica;
    drafter.model = draft_model_;
    drafter.pp = 1;
    const MemoryPlan p = plan_kv_memory(drafter, gpu_memory_utilization, block_size,
                                        max_num_batched_tokens, max_num_seqs);
    out.weight_bytes = p.weight_bytes;
    out.block_bytes = p.block_bytes;
    return out;
  }
  const ModelSpec& m = *replica.model;
  const MemoryPlan p = plan_kv_memory(replica, gpu_memory_utilization, block_size,
                                      max_num_batched_tokens, max_num_seqs);
  const int layers = pp_stage_layers(m.num_layers, replica.pp)[static_cast<std::size_t>(p.stage)];
  out.weight_bytes =
      config_.draft_layers * m.layer_params(false) * replica.weight_bytes_per_param() / replica.tp;
  out.block_bytes = p.block_bytes / std::max(1, layers) * config_.draft_layers;
  return out;
}

}  // namespace servesim
