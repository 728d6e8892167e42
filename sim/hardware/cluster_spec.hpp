#pragma once

#include <string>
#include <tuple>

#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// The nodes a fleet's GPUs sit in and the links between them (the `cluster:` section). Replicas
// are placed on nodes of `gpus_per_node` GPUs in fleet order, each on consecutive GPUs; one that
// does not fit the rest of a node starts a new one, and one larger than a node takes whole nodes
// (so GPU g of such a replica is on its node g / gpus_per_node). Every GPU has its own NIC (as a
// DGX/HGX node has one per GPU).
struct ClusterSpec {
  int gpus_per_node = 8;
  // Per GPU and direction, in GB/s (1e9 B/s), and the one-way latency: DGX H100 has eight
  // ConnectX-7 400 Gb/s ports (NVIDIA DGX H100 User Guide), the line rate is 50 GB/s.
  double nic_gb_per_s = 50;
  double nic_latency_us = 5;
  // Share of the NVLink (or PCIe) peak one GPU-to-GPU copy inside a node reaches, and its fixed
  // cost: fitted on the A100 DGX send_recv profile (devices_per_node 2), carried to other GPUs
  // (costmodels/README.md, "costmodel kv-transfer").
  double nvlink_efficiency = 0.7817;
  double nvlink_latency_us = 4.7;

  // Every field, to compare and order by (the cost models' table caches key on it).
  std::tuple<int, double, double, double, double> fields() const {
    return {gpus_per_node, nic_gb_per_s, nic_latency_us, nvlink_efficiency, nvlink_latency_us};
  }

  // One direction of the link a GPU-to-GPU copy inside a node takes, at the copy's share of its
  // peak (bytes/ns): NVLink (or its bridge) when the two GPUs have it, else PCIe (nvlink_gb_per_s
  // is bidirectional, pcie_gb_per_s per direction).
  double copy_bytes_per_ns(const GpuSpec& gpu, bool nvlink) const {
    return (nvlink ? gpu.nvlink_gb_per_s / 2 : gpu.pcie_gb_per_s) * nvlink_efficiency;
  }
  // One GPU-to-GPU copy of `bytes` alone on its links (ns): inside a node as above plus the
  // copy's fixed cost; between nodes through the two GPUs' NICs at line rate plus their latency
  // (the paths LinkNetwork gives a lone flow).
  double copy_ns(const GpuSpec& gpu, bool same_node, bool nvlink, double bytes) const {
    if (!same_node) return bytes / nic_gb_per_s + nic_latency_us * 1e3;
    return bytes / copy_bytes_per_ns(gpu, nvlink) + nvlink_latency_us * 1e3;
  }
  // Whether the boundary from pipeline stage `stage` to the next crosses nodes, for a replica of
  // tp × pp GPUs (rank x of stage s on the replica's GPU s·tp + x).
  bool stage_boundary_crosses_nodes(int tp, int pp, int stage) const {
    if (tp * pp <= gpus_per_node) return false;  // the replica fits one node
    return stage * tp / gpus_per_node != (stage + 1) * tp / gpus_per_node;
  }
  // Why a replica of tp × pp GPUs cannot be placed ("" when it can): tensor parallelism is
  // priced inside a node only, so every stage's tp GPUs must share one.
  std::string stage_placement_problem(int tp, int pp) const;
};

}  // namespace servesim
