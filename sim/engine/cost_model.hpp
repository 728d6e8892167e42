#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "sim/engine/batch_shape.hpp"
#include "sim/engine/time.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// Components a step's time is broken into. Every cost model fills the ones it models; the
// breakdown need not sum to the total when components overlap (the total is authoritative).
enum class CostComponent : std::size_t {
  kGemm,        // projection GEMMs (QKV, O, gate/up, down, experts)
  kAttention,   // prefill and decode attention
  kLight,       // norms, RoPE, activation, residual adds, KV-cache write
  kCollective,  // tensor/pipeline-parallel communication
  kEmbedding,   // embedding lookup and LM head
  kHost,        // scheduler/launch floor and sampling on the host
  kCount
};
inline constexpr std::size_t kNumCostComponents = static_cast<std::size_t>(CostComponent::kCount);
std::string_view cost_component_name(CostComponent c);

struct StepCost {
  SimTime total_ns = 0;
  std::array<double, kNumCostComponents> breakdown_ns{};  // per component, may overlap
  // Board energy of every GPU of the replica over the step, idle power included; 0 when the
  // model has no power model for the GPU.
  double energy_j = 0;
  // Pipeline parallelism: GPU time of the slowest stage of the step (its layers, the embedding on
  // the first, the LM head and sampler on the last, the activation send to the next), which spaces
  // steps in flight; 0 when the model prices stages as equal shares of the GPU time.
  double stage_ns = 0;

  double& operator[](CostComponent c) { return breakdown_ns[static_cast<std::size_t>(c)]; }
  double operator[](CostComponent c) const { return breakdown_ns[static_cast<std::size_t>(c)]; }
};

// Prices one engine step of one replica. Implementations are immutable after construction and
// safe to call from several threads on distinct runs (step() is const and keeps no shared
// mutable state, or guards it).
class CostModel {
 public:
  CostModel() = default;
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;
  virtual ~CostModel() = default;

  // Registry name (e.g. "roofline").
  virtual std::string_view name() const = 0;
  // Time of one step for `batch` on `replica`; total_ns ≥ 1 for a non-empty batch.
  virtual StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const = 0;
  // Client-observed time of every request that no step prices (the serving frontend: HTTP,
  // tokenization, streaming), which the metrics add to TTFT and E2E. 0 unless the model's
  // engine profile says otherwise.
  virtual SimTime request_overhead_ns() const { return 0; }
  // Whether a replica's power cap (ReplicaSpec::power_cap_w) changes its step times; a run that
  // sets a cap under a model that ignores it is refused rather than priced at full power.
  virtual bool prices_power_cap() const { return false; }
  // Whether the model prices an MoE replica laid out by expert parallelism or attention data
  // parallelism (ReplicaSpec::moe_parallel); a run that asks for one under a model that would
  // price it as tensor parallelism is refused.
  virtual bool prices_moe_parallelism() const { return false; }
  // Board power of all the replica's GPUs while it has no step in flight (W); 0 when the model
  // prices no energy for it.
  virtual double idle_power_w(const ReplicaSpec& /*replica*/) const { return 0; }
  // Why a replica capped at `watts` cannot be priced by this model ("" when it can: no cap, or
  // a model that prices caps).
  std::string power_cap_problem(double watts) const;
  // One step that carries a lone prefill chunk of `tokens` (no context before it, no decodes):
  // how a router or a placement prices a chunk on its own.
  StepCost lone_prefill(const ReplicaSpec& replica, std::int32_t tokens) const;
};

// A cost model that prices steps through another one and forwards everything else to it: the
// base of models that only rescale step times. `inner` must outlive it.
class WrappedCostModel : public CostModel {
 public:
  explicit WrappedCostModel(const CostModel& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  SimTime request_overhead_ns() const override { return inner_.request_overhead_ns(); }
  bool prices_power_cap() const override { return inner_.prices_power_cap(); }
  bool prices_moe_parallelism() const override { return inner_.prices_moe_parallelism(); }
  double idle_power_w(const ReplicaSpec& r) const override { return inner_.idle_power_w(r); }

 protected:
  const CostModel& inner_;
};

// Another cost model with every step time multiplied by `factor` (request overhead unchanged):
// how much a run's answer moves when step pricing is off by a given fraction (sim2real's
// sensitivity). `inner` must outlive it.
class ScaledCostModel final : public WrappedCostModel {
 public:
  ScaledCostModel(const CostModel& inner, double factor);
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

 private:
  double factor_;
};

}  // namespace servesim
