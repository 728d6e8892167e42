#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "sim/engine/kv_cache.hpp"
#include "sim/engine/lora_cache.hpp"
#include "sim/engine/replica_scheduler.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim {

// What a replica serves: whole requests (mixed, the default), or one phase of disaggregated
// serving (prefill: prompts and first tokens; decode: the rest, after the KV transfer).
enum class ReplicaRole : std::int8_t { kMixed, kPrefill, kDecode };
inline const char* role_name(ReplicaRole r) {
  return r == ReplicaRole::kPrefill ? "prefill" : r == ReplicaRole::kDecode ? "decode" : "mixed";
}

// One replica in a fleet: its spec, scheduler and KV cache, and what the engine tracks about it.
struct Replica {
  ReplicaId id = 0;
  ReplicaSpec spec;
  std::unique_ptr<ReplicaScheduler> scheduler;
  KvCache kv;
  std::int32_t max_model_len = 0;  // longest prompt + output a request may have here
  ReplicaRole role = ReplicaRole::kMixed;
  int node = 0;       // the cluster node it runs on (disaggregated fleets; LinkNetwork's placement)
  int group = 0;      // its group's index in the config's `replicas:` list
  bool busy = false;  // a step in flight
  SimTime step_end = -1;  // end of the last step in flight (valid while busy)
  SimTime busy_ns = 0;
  std::int64_t steps = 0;
  double energy_j = 0;      // of its steps (CostModel::step), idle time between them excluded
  double idle_w = 0;        // board power with no step in flight (CostModel::idle_power_w)
  double peak_power_w = 0;  // highest mean board power of its steps (overlapping ones summed)
  double step_power_w = 0;  // of the steps in flight, above idle_w; 0 while idle
  // Pipeline parallelism runs up to pp steps at once, each on a different stage (vLLM V1's batch
  // queue): a new step may start when the first stage is free (stage_free) while fewer than
  // max_in_flight are in flight. Steps end in the order they started. One step with pp = 1.
  struct InFlight {
    Batch batch;
    SimTime end = 0;
    double watts = 0;  // above idle_w
  };
  std::deque<InFlight> in_flight;
  int max_in_flight = 1;
  SimTime stage_free = -1;
  Batch batch;  // the step being formed (scratch)
  // Its LoRA adapters (the run's `lora:` section); null without one.
  std::unique_ptr<LoraCache> lora;

  Replica(ReplicaId id_in, const ReplicaSpec& spec_in, std::unique_ptr<ReplicaScheduler> sched,
          KvCache kv_in, std::int32_t max_len)
      : id(id_in),
        spec(spec_in),
        scheduler(std::move(sched)),
        kv(std::move(kv_in)),
        max_model_len(max_len),
        max_in_flight(spec_in.pp > 1 ? spec_in.pp : 1) {}
};

// The replicas of a run. Routers see it read-only.
using Fleet = std::vector<std::unique_ptr<Replica>>;

}  // namespace servesim
