#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/sim2real/experiments.hpp"

namespace servesim::sim2real {

// How a measured run's host-memory KV tier becomes the replay's `kv_offload:` section.
//
// The runs with cpu_kv_offload = True were served with vLLM's `--kv-offloading-size=<GiB>`
// (native backend: the OffloadingConnector with its CPU spec). In the vLLM images of the
// experiments (v0.14.1 / v0.15.1) that size is the whole vLLM instance's CPU KV buffer: vLLM's
// config code hands it to the connector as `cpu_bytes_to_use` = size × 2^30 for the instance,
// shared by its workers (vllm-project/vllm#24498; vLLM releases without that change pass
// `kv_bytes_per_rank` = size × 2^30 / (tp × pp), the same total), so the total over the TP ranks
// is the size either way. One vLLM instance is one simulated replica, hence `cpu_gib` = the size.
//
// What the connector does, and how the simulator's tier (configs/README.md "KV offload") maps it:
// - prefix caching on (vLLM V1 default, and the replay's): the connector keeps full KV blocks
//   in CPU memory keyed by their prefix hash, in LRU order; a request whose prefix misses the
//   GPU cache looks it up there and loads the hits back (`get_num_new_matched_tokens`). The
//   simulator's prefix tier does the same lookup and LRU.
// - preemption: vLLM V1 preempts by recompute; a preempted request's blocks that the CPU tier
//   holds come back as CPU hits instead of being recomputed. The simulator publishes a preempted
//   request's blocks as cached blocks, which reach the tier on GPU eviction, so they come back the
//   same way.
// - loads are asynchronous in vLLM (the load flag `True`): the request waits outside the batch
//   while its blocks copy, and the other requests' steps go on. The nearest of the simulator's
//   two pricings is `overlap: true` (a step takes max(compute, load), not compute + load).
// - link: the GPU's host link from the hardware file (`pcie_gb_per_s`, the default), each TP
//   rank moving its own shard.
// Not modelled: vLLM stores every block as it is completed, the simulator when the GPU evicts it
// (the CPU tier's contents and store traffic differ, not the stores' effect on step times, since
// both run in the background); the loading request's wait outside the batch.
// With `--no-prefix-caching` the same section gives the simulator's swap tier (a diagnostic:
// vLLM's connector keys its blocks by prefix hash).
// Nothing here is fitted: the size comes from the run's flag, the rest from vLLM's code.

// The `--kv-offloading-size` of a run, in GiB: parsed from its cpu_kv_offload_detail column
// ("--kv-offloading-size=8 GiB + …") when cpu_kv_offload is True; none when the column is False
// or empty, or when the detail names no positive size.
std::optional<double> kv_offloading_gib(const Experiment& e);

// The replay config's `kv_offload:` section (YAML lines, ending in a newline) for a run with a
// kv_offloading_gib; "" for every other run.
std::string kv_offload_yaml(const Experiment& e);

// The notes about the run's memory that the replay does not reproduce: a cpu_kv_offload run
// whose size is unknown (not modelled), what a modelled tier leaves out, an empty
// cpu_kv_offload column, and a gpu_memory_utilization the CSV notes name ("reduced to 0.75")
// that differs from the gpu_mem_util column the replay uses.
std::vector<std::string> memory_notes(const Experiment& e);

}  // namespace servesim::sim2real
