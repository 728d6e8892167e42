#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "schedulers/router/least_outstanding_router.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// LoRA-affinity routing (`router.kind: lora_affinity`), after BLIS's LoRA-affinity scorer and
// llm-d's adapter-aware routing: a request on adapter a goes to a replica that holds a — on its
// GPU or about to load it, i.e. one the router sent a's requests to last — unless that costs too
// much load. The router keeps, per adapter, the `max_holders` replicas it sent that adapter to
// most recently (most recent first). Among those that are eligible and have fewer than
// `max_outstanding` outstanding requests (0: each replica's own max_num_seqs, so the request is
// admitted at once where it has KV), the least outstanding wins, ties to the most recent. When
// none qualifies, and for base-model requests, it is least_outstanding (ties in turn), and the
// replica chosen joins a's holders. So a hot adapter spreads over more replicas only when its
// holders fill, and a cold one stays on one.
// Weights: affinity outranks load until the holder is full (max_outstanding); past it, load alone
// decides.
// Cost per request: O(max_holders) (an unordered_map lookup, then one outstanding count per
// holder) when a holder qualifies; the least_outstanding fallback is O(log N) from its index of
// loads (a scan for a request that fits on only some replicas). The router's table holds O(adapters
// · max_holders) ids. Deterministic. Not thread-safe.
class LoraAffinityRouter : public LeastLoadedRouter {
 public:
  struct Options {
    std::int64_t max_outstanding = 0;  // 0: the holder's seat limit
    std::int32_t max_holders = 4;
  };
  // Reads `router: {kind: lora_affinity, max_outstanding, max_holders}`; unknown keys and bad
  // values are InputErrors.
  static Options parse(const ConfigNode& node);

  LoraAffinityRouter() = default;
  explicit LoraAffinityRouter(const Options& options) : o_(options) {}
  std::string_view name() const override { return "lora_affinity"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  // Requests routed to a holder of their adapter, and those sent by load (a miss).
  std::int64_t affinity_hits() const { return hits_; }
  std::int64_t affinity_misses() const { return misses_; }

 private:
  Options o_;
  std::unordered_map<std::int32_t, std::vector<ReplicaId>> holders_;
  std::int64_t hits_ = 0;
  std::int64_t misses_ = 0;
};

}  // namespace servesim
