#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/config/config_node.hpp"
#include "sim/engine/time.hpp"

namespace servesim {

// What the autoscaler measures, averaged over the replicas it counts (see Autoscaler):
// kQueue: requests waiting (outstanding, not running) per replica, vLLM's num_requests_waiting;
// kOutstanding: requests running or waiting per replica; kKvUse: the share of KV blocks in use
// per replica; kSloMiss: the share of the requests that ended within the window
// (finished or rejected) that missed their SLO.
enum class AutoscaleMetric : std::int8_t { kQueue, kOutstanding, kKvUse, kSloMiss };
const char* autoscale_metric_name(AutoscaleMetric m);

// The `autoscaling:` section: a fleet-level horizontal autoscaler on a fleet of one replica
// group. Absent: the fleet is static and nothing of a run changes. Keys and defaults are in
// configs/README.md ("Autoscaling").
// Invariants after parse: 1 ≤ min_replicas ≤ initial_replicas ≤ max_replicas ≤ kMaxReplicas;
// interval > 0; window ≥ interval; target > 0 (≤ 1 for kKvUse and kSloMiss); tolerance in
// [0, 1); storage_gb_per_s > 0; every time below 1e6 s.
struct AutoscalingConfig {
  ConfigNode node;
  AutoscaleMetric metric = AutoscaleMetric::kQueue;
  double target = 0;
  SimTime interval = 0;  // between evaluations (the HPA sync period)
  SimTime window = 0;    // the metric is averaged over the evaluations of the last window
  int min_replicas = 1;
  int max_replicas = 1;
  int initial_replicas = 1;
  // |metric / target − 1| ≤ tolerance: no change (the HPA's tolerance, 0.1 by default).
  double tolerance = 0.1;
  // A scale-down takes the highest recommendation of this window (the HPA's downscale
  // stabilization, 300 s by default).
  SimTime scale_down_stabilization = 0;
  // Provisioning delay: weights bytes ÷ storage_gb_per_s + engine_start, unless
  // provisioning_delay is given.
  double storage_gb_per_s = 2.0;
  SimTime engine_start = 0;
  std::optional<SimTime> provisioning_delay;
  std::string prices_file;  // "" = the catalog's prices/on-demand.yaml

  static AutoscalingConfig parse(const ConfigNode& node);
};

}  // namespace servesim
