#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/autoscaling_config.hpp"
#include "sim/config/config_node.hpp"
#include "sim/config/kv_offload_config.hpp"
#include "sim/config/lora_config.hpp"
#include "sim/config/speculative_config.hpp"
#include "sim/hardware/link_network.hpp"
#include "sim/hardware/replica_spec.hpp"
#include "sim/output/metrics.hpp"

namespace servesim {

// A cuda_graph_mode value (decode_only | piecewise); an error naming the node otherwise.
CudaGraphMode parse_cuda_graph_mode(const ConfigNode& node);

// One group of identical replicas in `replicas:`.
struct ReplicaGroupConfig {
  ConfigNode node;
  std::string gpu;
  std::string model;
  int count = 1;
  int tp = 1;
  int pp = 1;
  int attention_dp = 1;  // attention data-parallel groups within tp (ReplicaSpec)
  int ep = 1;            // expert-parallel ranks within tp
  Precision weights = Precision::kBf16;
  double kv_dtype_bytes = 2.0;  // kv_cache_dtype: auto (the model's bf16) 2, fp8 1
  bool cuda_graphs = true;
  CudaGraphMode cuda_graph_mode = CudaGraphMode::kDecodeOnly;
  std::int64_t cuda_graph_max_tokens = 0;
  double power_cap_w = 0;
  std::string topology;  // "" = the GPU's default (GpuSpec::default_topology)
  ReplicaRole role = ReplicaRole::kMixed;
  int batches_in_flight = 0;  // pipeline parallelism: steps in flight at once; 0 = pp
  // The group's scheduler: the fleet's `scheduler:` section with the group's own `scheduler:`
  // keys laid over it (a prefill pool's token budget beside a decode pool's batch size, as
  // disaggregated engines launch each pool); the kind is always the fleet's.
  ConfigNode scheduler;
};

// What `output:` asks for.
struct OutputConfig {
  std::string dir;           // "" = out/<name>
  std::string csv = "auto";  // auto | true | false (auto: CSV too when ≤ csv_max_requests)
  std::int64_t csv_max_requests = 100000;
  std::int64_t trace_max_steps = 100000;
  std::int64_t trace_max_requests = 1000;  // requests drawn as tracks of their own
  bool trace = true;
  bool requests = true;
  bool steps = true;
  // summary.json's `steady_state`: the benchmark window of a saturated run, its seats being
  // every replica's max_num_seqs (sim/output/steady_state_window.hpp).
  bool steady_state = false;
  // Whether requests.h5 / requests.csv carry the speculative decoding columns (set from the
  // run's `speculative:` section, not an output key).
  bool speculative = false;
};

// The most replicas a fleet may have, over all its groups: a larger `count` is an input error
// before anything is built (a replica's state is a few KiB to a few MiB, its KV block table
// growing with the GPU's memory; see tools/README.md "Input limits").
inline constexpr std::int64_t kMaxReplicas = 100'000;
// The most GPUs (count × tp × pp over the groups) of a disaggregated fleet: its link graph has a
// vertex per GPU and a path search per GPU pair that moves KV.
inline constexpr std::int64_t kMaxDisaggregatedGpus = 16'384;

// A run config file, validated at the top level (each plug-in section is validated by its
// registry when the run is built). Unknown top-level keys are errors.
struct RunConfig {
  ConfigNode root;
  std::string name;  // defaults to the file's stem
  std::uint64_t seed = 0;
  std::vector<ReplicaGroupConfig> replicas;
  ConfigNode scheduler;
  ConfigNode router;
  // Disaggregated serving (replica groups with role prefill and decode): the decode router;
  // disaggregated() is false for a fleet of mixed replicas. The cluster's nodes and links carry
  // KV transfers and the pipeline stages of replicas larger than a node.
  ConfigNode decode_router;
  ClusterSpec cluster;
  bool disaggregated() const;
  ConfigNode cost_model;
  ConfigNode workload;
  SloPolicy slo;
  OutputConfig output;
  std::vector<std::string> catalog_dirs;  // extra catalog folders, searched first
  // Speculative decoding on every replica; absent: none.
  std::optional<SpeculativeConfig> speculative;
  // Multi-LoRA serving on every replica; absent: requests are all on the base model.
  std::optional<LoraConfig> lora;
  // A horizontal autoscaler over the fleet's one group, whose replicas are built max_replicas
  // times; absent: a static fleet.
  std::optional<AutoscalingConfig> autoscaling;
  // A CPU KV tier behind every replica's GPU KV cache; absent: none.
  std::optional<KvOffloadConfig> kv_offload;

  // Parses `document` (overrides already applied). `seed_override` wins over the file's seed.
  // A top-level `config_dir:` makes relative input paths resolve against that folder.
  static RunConfig parse(const ConfigNode& document,
                         std::optional<std::uint64_t> seed_override = {});
};

}  // namespace servesim
