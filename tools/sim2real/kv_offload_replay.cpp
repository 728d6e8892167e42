#include "tools/sim2real/kv_offload_replay.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace servesim::sim2real {
namespace {

// The number that follows `key` in `text` ("8" of "--kv-offloading-size=8 GiB"); none when `key`
// is absent or no number follows it.
std::optional<double> number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = text.c_str() + at + key.size();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  return value;
}

std::string detail(const Experiment& e) {
  const auto it = e.columns.find("cpu_kv_offload_detail");
  return it == e.columns.end() ? std::string() : it->second;
}

}  // namespace

std::optional<double> kv_offloading_gib(const Experiment& e) {
  if (!e.cpu_kv_offload.value_or(false)) return std::nullopt;
  const auto gib = number_after(detail(e), "--kv-offloading-size=");
  if (!gib || !(*gib > 0)) return std::nullopt;
  return gib;
}

std::string kv_offload_yaml(const Experiment& e) {
  const auto gib = kv_offloading_gib(e);
  if (!gib) return "";
  std::string y = "kv_offload:\n";
  y += fmt::format(
      "  cpu_gib: {}   # --kv-offloading-size: the vLLM instance's total over its TP ranks\n",
      *gib);
  y += "  overlap: true   # vLLM loads CPU hits asynchronously, outside the step\n";
  return y;
}

std::vector<std::string> memory_notes(const Experiment& e) {
  std::vector<std::string> notes;
  if (!e.cpu_kv_offload) {
    notes.push_back("cpu_kv_offload unknown (empty column)");
  } else if (*e.cpu_kv_offload) {
    if (const auto gib = kv_offloading_gib(e)) {
      notes.push_back(fmt::format(
          "KV offload: {} GiB CPU tier; not modelled: vLLM stores each block as it completes "
          "(here: on GPU eviction) and a loading request waits outside the batch (here: the step "
          "takes max(compute, load))",
          *gib));
    } else {
      notes.push_back(
          fmt::format("KV offload to CPU is not modelled: cpu_kv_offload_detail '{}' names no "
                      "--kv-offloading-size",
                      detail(e)));
    }
  }
  // The CSV's gpu_mem_util column is what the replay reads; a different value in the notes is
  // reported, not used.
  if (const auto noted = number_after(e.notes, "reduced to "); noted && *noted != e.gpu_mem_util) {
    notes.push_back(fmt::format(
        "gpu_memory_utilization: the csv notes say {}, the replay uses the gpu_mem_util column "
        "({}){}",
        *noted, e.gpu_mem_util,
        e.kv_blocks_total_gpu > 0
            ? "; the GPU KV cache is the measured block count either way"
            : ", so the simulated GPU KV cache may be larger than the one served"));
  }
  return notes;
}

}  // namespace servesim::sim2real
