#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/config/config_node.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// The serving engine's own constants: what no datasheet gives and a kernel profile does not
// see (host time per step, the engine's attention kernels, the client-observed time of a
// request outside every step), per GPU, applied on top of the hardware file's `analytical:` and
// `host:` sections. A file configs/engines/<name>.yaml:
//   name: vllm-v1
//   source: | how each constant was obtained (fitted: on which runs)
//   request_overhead_ns: 11800000        # optional, every GPU
//   cuda_graph_mode: piecewise           # optional: how the engine uses CUDA graphs
//   async_scheduling: true               # optional: whether the engine schedules one step ahead
//   analytical: {collectives: {algorithm: vllm_custom}}   # optional, every GPU
//   gpus:
//     h100-sxm:                          # a catalog GPU name or alias
//       host: {graph_floor_ns: 0, eager_floor_ns: 2000000}
//       analytical: {attention: {decode_bw_fraction: 0.85}}
// A GPU the file does not list keeps its hardware file's constants, except the host floors: they
// are the engine's CPU work (scheduling, input preparation, kernel launches or graph replays,
// output processing), not the GPU's, so when exactly one listed GPU states them (the GPU the
// engine was fitted on) every other GPU takes them too. A GPU is listed once (an alias names its
// GPU). A file without `name:` is named after the file; an empty profile is an error.
struct EngineProfile {
  ConfigNode file;  // the profile as read (for tools that derive a modified profile)
  std::string name;
  // Substrings of the serving image names this profile describes (e.g. "vllm/vllm-openai"), so a
  // tool replaying measured runs can pick the profile from the run's image.
  std::vector<std::string> images;
  double request_overhead_ns = 0;
  // Which steps the engine replays from CUDA graphs (vLLM V1: piecewise, i.e. mixed steps too).
  // A run's replicas take it unless their config sets cuda_graph_mode (build_run). None: not
  // stated.
  std::optional<CudaGraphMode> cuda_graph_mode;
  // Whether the engine forms the next batch while a step runs (vLLM >= 0.12 default). A run's
  // chunked scheduler takes it unless its config sets async_scheduling. None: not stated
  // (sim2real then goes by the image's vLLM version).
  std::optional<bool> async_scheduling;
  // An `analytical:` section for every GPU (applied before the per-GPU sections).
  std::optional<ConfigNode> all_gpus;
  // (catalog name of the GPU, its section) — the name as the catalog resolves it.
  std::vector<std::pair<std::string, ConfigNode>> gpus;

  // `ref` is a map (the profile inline), or a string: a path to a YAML file, or the stem of a
  // file engines/<name>.yaml in the catalog folders. Unknown keys and GPU names are errors.
  static std::shared_ptr<const EngineProfile> load(const ConfigNode& ref);
  // The engine a `cost_model:` section names (`kind: analytical` with `engine:`); none otherwise.
  static std::shared_ptr<const EngineProfile> of_cost_model(const ConfigNode& cost_model);
  // How a replica launches its steps when it sets no CUDA-graph mode or capture size itself:
  // the engine's mode (else the replica's), and for piecewise graphs vLLM V1's largest capture
  // size min(2 max_num_seqs, 512).
  static void default_graph_launch(const EngineProfile* engine, bool mode_set, bool max_tokens_set,
                                   std::int64_t max_num_seqs, ReplicaSpec& replica);
  static EngineProfile parse(const ConfigNode& file);
  // Every engines/*.yaml under the catalog folders, folder by folder, sorted by file name.
  static std::vector<std::string> files();
  // The first of files() named <name>.yaml; none when absent.
  static std::optional<std::string> file_of(const std::string& name);
  // The name of the first of files() whose `images` occurs in `image`; none when no profile
  // claims it.
  static std::optional<std::string> find_for_image(const std::string& image);

  // This GPU's section; null when the profile does not list the GPU.
  const ConfigNode* section_for(const GpuSpec& gpu) const;
  // Whether the profile has constants for this GPU (an all-GPU `analytical:` or its section);
  // the carried host floors aside, which every GPU takes.
  bool covers(const GpuSpec& gpu) const { return all_gpus.has_value() || section_for(gpu); }
  // The host floors a GPU the profile does not list takes: the one listed GPU's `host:`; none
  // when no listed GPU or more than one states host floors.
  std::optional<ConfigNode> carried_host() const;
  // Applies this GPU's section (if any) to `params`, and the carried host floors to a GPU whose
  // section states none.
  void apply(const GpuSpec& gpu, AnalyticalParams& params) const;
};

}  // namespace servesim
