#include "sim/config/kv_offload_config.hpp"

#include <fmt/format.h>

namespace servesim {

KvOffloadConfig KvOffloadConfig::parse(const ConfigNode& node) {
  node.require_map("the kv_offload section {cpu_gib, link_gb_per_s, overlap}");
  node.check_keys({"cpu_gib", "link_gb_per_s", "overlap"});
  KvOffloadConfig c;
  c.node = node;
  // Upper bounds catch unit slips (bytes for GiB) and keep block counts in range.
  c.cpu_gib = node.get_positive("cpu_gib");
  if (c.cpu_gib > kMaxCpuGib) {
    node.at("cpu_gib").fail(fmt::format(
        "expected at most {} GiB of host memory per replica, got {}", kMaxCpuGib, c.cpu_gib));
  }
  if (node.has("link_gb_per_s")) {
    c.link_gb_per_s = node.get_positive("link_gb_per_s");
    if (*c.link_gb_per_s > kMaxLinkGbPerS) {
      node.at("link_gb_per_s")
          .fail(fmt::format("expected at most {} GB/s per direction, got {}", kMaxLinkGbPerS,
                            *c.link_gb_per_s));
    }
  }
  c.overlap = node.get_bool("overlap", false);
  return c;
}

}  // namespace servesim
