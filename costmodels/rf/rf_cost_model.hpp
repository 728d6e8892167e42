#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "costmodels/common/replica_table_cache.hpp"
#include "costmodels/rf/rf_profile_set.hpp"
#include "costmodels/rf/spec_scaler.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim {

// The Random-Forest baseline of Vidur, inside the simulator: one forest per operation of the
// profiled layer (Vidur's mlp.csv; feature num_tokens, one forest per TP degree) trained on the
// home GPU's profile, tabulated so a step is a lookup.
//   kind: rf         the home forests as they are, on whatever GPU the replica has (on another
//                    GPU this is "RF verbatim").
//   kind: rf_scaled  the home forests moved to the replica's GPU by SpecScaler (the
//                    spec-scaled RF; `scale: roofline` by default, `analytical` for the hybrid).
// One step:
//   t = layers · (Σ profiled layer ops except emb + 2 all-reduces + attention + KV write)
//       + (PP − 1) stage transfers + emb + final norm (the input_layernorm forest) + LM head
//       + sampling + host floor   (PP: one batch's full pass, as in AnalyticalCostModel)
// The all-reduces come from the network profile's forest when `network:` is given (scaled by the
// NVLink ratio for rf_scaled), else from the analytical model. Vidur's attention.csv is not in
// this data, so attention, the KV-cache write, the LM head, sampling and the host floor are the
// analytical model's (AnalyticalCostModel's pricer, with the replica's CUDA-graph setting); the
// profiled ops are eager kernels. Beyond the profile's largest token count an op grows linearly
// in tokens (StepFunction). The per-token step table keeps a running maximum so that a bigger
// batch is never cheaper (forests of noisy profiles are not monotone).
//
// Config keys: kind, gpu (home GPU, required), profiles (folder, required), network (folder with
// all_reduce.csv), cache_dir (default $XDG_CACHE_HOME/servesim or ~/.cache/servesim; "" = off),
// trees (250), depths ([6, 8, 12]), subsample (0.8), cv_folds (3), cv_trees (50), seed (42),
// threads (2), table_max_tokens (16384), scale (rf_scaled only: roofline | analytical).
// The profile used is the replica model's (by id, else by layer dimensions; see
// RfProfileSet::require_model) at the replica's TP degree; a missing one is an InputError.
// Forests are trained (or read from the cache) on the first step of each replica spec.
// Threading: step() is const and safe to call concurrently; per-replica tables are built under a
// lock and never change afterwards.
class RfCostModel final : public CostModel {
 public:
  enum class Kind { kVerbatim, kScaled };
  struct Options {
    Kind kind = Kind::kVerbatim;
    std::shared_ptr<Catalog> catalog;  // owns *home
    const GpuSpec* home = nullptr;
    std::string gpu_dir;  // home GPU's profile folder
    std::string all_reduce_path;
    std::string cache_dir;
    RfTrainOptions train;
    SpecScaler::Mode scale = SpecScaler::Mode::kRoofline;
    int table_max_tokens = 16384;
  };
  explicit RfCostModel(Options options);
  ~RfCostModel() override;
  static Options parse(const ConfigNode& node, Kind kind);

  std::string_view name() const override {
    return options_.kind == Kind::kScaled ? "rf_scaled" : "rf";
  }
  StepCost step(const BatchShape& batch, const ReplicaSpec& replica) const override;

  // The tables behind `replica` and how they were obtained (trained or cached), for tools.
  const RfLoaded& loaded(const ReplicaSpec& replica) const;

 private:
  struct Prepared;
  const Prepared& prepare(const ReplicaSpec& replica) const;
  std::unique_ptr<Prepared> build(const ReplicaSpec& replica) const;

  Options options_;
  ReplicaTableCache<Prepared> cache_;
};

}  // namespace servesim
