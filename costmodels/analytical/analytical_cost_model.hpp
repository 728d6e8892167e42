#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/analytical/layer_pricer.hpp"
#include "costmodels/common/replica_table_cache.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// The parameter-only step-time predictor of costmodels/README.md: GPU datasheet + model config +
// per-SKU constants (the hardware file's `analytical:`/`host:` sections) in, step time out.
//   t_step = layers · (GEMMs + light kernels + all-reduces + attention)
//            + (PP − 1) stage-to-stage activation transfers
//            + embedding + final norm + LM head + sampling + S(N)
// With PP > 1 a step is one batch's full pass through the pipeline, stage after stage (per-token
// latency); the engine keeps up to `batches_in_flight` steps in flight, spaced by the slowest
// stage's time (StepCost::stage_ns), which sets the pipeline's throughput.
// CUDA graphs (ReplicaSpec::step_launch: decode-only steps, and in piecewise mode mixed steps
// too, up to cuda_graph_max_tokens) give smaller launch floors and the graph host floor; attention
// keeps its eager launch floor outside a full graph.
//
// Config keys: kind, terms (map of AnalyticalTerms switches), table_max_tokens (default 16384),
// engine (an EngineProfile: the serving engine's own constants on top of the hardware files),
// sampling ({top_p: bool, penalties: bool}: what every request's sampling parameters ask of the
// engine's sampler; default neither, one pass over the logits).
// MoE replicas laid out by expert or attention data parallelism (ReplicaSpec::moe_parallel):
// the step's requests are spread over the attention groups as the engines balance their DP
// ranks (decodes dealt in turn, each prefill chunk to the group with the fewest tokens so far);
// every group runs its own attention, projections and LM head on its requests, all groups meet
// at every MoE layer, so the step lasts as long as its busiest group's share plus the routed
// experts of all the step's tokens (LayerPricer::group_side_ns, expert_side_ns).
// Speed: the token-dependent part of a step is tabulated per replica spec on first use (a few
// ms), so step() is a table lookup plus a pass over the batch's requests.
// Tables are keyed by the addresses of the replica's GpuSpec and ModelSpec (as the catalog hands
// them out): those specs must outlive the model and must not change.
// Threading: step() is const and safe to call concurrently; the per-replica tables are built
// under a lock and never change afterwards.
class AnalyticalCostModel final : public CostModel {
 public:
  struct Options {
    AnalyticalTerms terms;
    int table_max_tokens = 16384;
    int graph_table_max_tokens = 1024;
    std::shared_ptr<const EngineProfile> engine;  // null: the hardware files' constants alone
    bool sampling_top_p = false;
    bool sampling_penalties = false;
  };
  explicit AnalyticalCostModel(Options options);
  ~AnalyticalCostModel() override;
  static Options parse(const ConfigNode& node);

  std::string_view name() const override { return "analytical"; }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;
  // The engine profile's request_overhead_ns (0 without one).
  SimTime request_overhead_ns() const override;
  // The cap sets f_clk: by the hardware file's power model, else by the placeholder law.
  bool prices_power_cap() const override { return true; }
  bool prices_moe_parallelism() const override { return true; }
  double idle_power_w(const ReplicaSpec& replica) const override;

  // The pricer this model uses for `replica` (its GPU's constants, this model's terms).
  LayerPricer pricer(const ReplicaSpec& replica) const;

 private:
  struct Prepared;
  const Prepared& prepare(const ReplicaSpec& replica) const;
  std::unique_ptr<Prepared> build(const ReplicaSpec& replica) const;
  // step() of an MoE replica laid out by expert or attention data parallelism.
  StepCost moe_parallel_step(const BatchShape& batch, const ReplicaSpec& replica,
                             const Prepared& p) const;

  Options options_;
  ReplicaTableCache<Prepared> cache_;
};

}  // namespace servesim
