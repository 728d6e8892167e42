#pragma once

#include <memory>
#include <vector>

#include "sim/config/lora_config.hpp"
#include "sim/engine/cost_model.hpp"

namespace servesim {

// The LoRA adapter weights of one adapter of `rank` (bf16, every layer, config.target_modules):
// on one GPU of a replica at tensor parallelism `tp` (the adapter sharded like its base layer:
// a column-parallel projection keeps its input width whole and splits its output, a row-parallel
// one the reverse), and whole (tp 1: what disk and host memory hold).
double lora_adapter_bytes(const LoraConfig& config, std::int32_t rank, const ModelSpec& model,
                          int tp);

// Time (ns) the batched LoRA kernels (Punica SGMV / S-LoRA MBGMM) add to one step of `slices`:
// per layer and target module a shrink GEMM x·A (tokens × d_in × r) and an expand GEMM (x·A)·B
// (tokens × r × d_out), each one kernel over every adapter of the step, priced on a roofline at
// the GPU's datasheet peaks: max(FLOPs / bf16 peak, bytes / HBM bandwidth) with
//   FLOPs = Σ_adapters 2·tokens·r·(d_in + d_out)
//   bytes = Σ_adapters r·(d_in + d_out)·2 (each distinct adapter's weights, read once)
//           + tokens·(d_in + 2r + d_out)·2 (activations in and out of each kernel).
// Widths are per GPU at the replica's TP; every layer of every pipeline stage counts.
double lora_step_ns(const std::vector<LoraSlice>& slices, const LoraConfig& config,
                    const ReplicaSpec& replica);

// A run's cost model with the LoRA term added to every step that holds adapters: the inner
// model prices the base model as usual, lora_step_ns is added to total_ns and to the GEMM
// component (the same analytical term under every inner kind; energy is left as the inner
// model prices it). Steps without adapters are the inner model's own.
class LoraCostModel final : public WrappedCostModel {
 public:
  LoraCostModel(std::shared_ptr<const CostModel> inner, LoraConfig config);
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

 private:
  std::shared_ptr<const CostModel> owner_;
  LoraConfig config_;
};

}  // namespace servesim
