#include "sim/output/kv_offload_summary.hpp"

#include <algorithm>

namespace servesim {

nlohmann::json kv_offload_summary(const Fleet& fleet, double makespan_s) {
  std::int64_t stored = 0;
  std::int64_t loaded = 0;
  std::int64_t dropped = 0;
  std::int64_t swapped_in = 0;
  std::int64_t resident = 0;
  std::int64_t cpu_hits = 0;
  std::int64_t swaps_out = 0;
  std::int64_t swaps_in = 0;
  std::int64_t recomputes = 0;
  double bytes_to = 0;
  double bytes_from = 0;
  double bytes_dropped = 0;
  double bytes_resident = 0;
  double peak_bytes = 0;  // the largest of one replica's
  double capacity_bytes = 0;
  double load_s = 0;
  double store_busy = 0;  // the busiest replica's device→host link, as a fraction of the run
  bool any = false;
  for (const auto& r : fleet) {
    const KvOffload* t = r->kv.offload();
    if (t == nullptr) continue;
    any = true;
    const double b = t->block_bytes();
    stored += t->stored_blocks();
    loaded += t->loaded_blocks();
    dropped += t->dropped_blocks();
    swapped_in += t->swapped_in_blocks();
    resident += t->resident_blocks();
    cpu_hits += t->cpu_hit_blocks();
    swaps_out += t->swaps_out();
    swaps_in += t->swaps_in();
    recomputes += t->recomputes();
    bytes_to += static_cast<double>(t->stored_blocks()) * b;
    bytes_from += static_cast<double>(t->loaded_blocks()) * b;
    bytes_dropped += static_cast<double>(t->dropped_blocks()) * b;
    bytes_resident += static_cast<double>(t->resident_blocks()) * b;
    peak_bytes = std::max(peak_bytes, static_cast<double>(t->peak_blocks()) * b);
    capacity_bytes = std::max(capacity_bytes, static_cast<double>(t->capacity_blocks()) * b);
    load_s += sim_to_s(t->load_ns_total());
    if (makespan_s > 0)
      store_busy = std::max(store_busy, sim_to_s(t->store_busy_ns()) / makespan_s);
  }
  if (!any) return nullptr;
  return {{"cpu_capacity_bytes", capacity_bytes},
          {"stored_blocks", stored},
          {"loaded_blocks", loaded},
          {"dropped_blocks", dropped},
          {"swapped_in_blocks", swapped_in},
          {"resident_blocks", resident},
          {"bytes_to_cpu", bytes_to},
          {"bytes_from_cpu", bytes_from},
          {"bytes_dropped", bytes_dropped},
          {"bytes_resident", bytes_resident},
          {"peak_cpu_bytes", peak_bytes},
          {"cpu_hit_blocks", cpu_hits},
          {"swaps_out", swaps_out},
          {"swaps_in", swaps_in},
          {"recomputes", recomputes},
          {"load_s", load_s},
          {"store_link_busy_fraction", store_busy}};
}

}  // namespace servesim
