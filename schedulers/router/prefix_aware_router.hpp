#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "schedulers/router/round_robin_router.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Prefix-cache-aware routing (`router.kind: prefix_aware`), a weighted mix of scorers as in
// llm-d's inference scheduler: each eligible replica r scores
//   prefix_weight · p(r) + queue_weight · q(r) + kv_weight · (1 − u(r))
// and the request goes to the highest score, ties taken in turn. p(r) is the share of the
// request's cacheable prefix (its hashed blocks, or its prefix group's blocks) that r holds
// cached as a leading run, from r's KvCache (vLLM's block-hash lookup); q(r) = (max − o(r)) /
// (max − min) over the eligible replicas' outstanding requests o (1 when all are equal); u(r) is
// r's KV-block use. Overload rule: a replica with o(r) > min o + overload_outstanding scores
// p(r) = 0, so load alone decides whether a request goes there.
//
// scrape_interval_ms > 0: the router sees o, u and the cache contents only as of its last scrape,
// as a router reading replica metrics does. A scrape is taken at the first arrival at or after
// each multiple of the interval (the engine has no timer events), and records per replica the
// ids of its cached blocks at hash-block granularity (a hash block counts as held when its first
// KV block is cached), so p(r) is then measured in whole hash blocks. 0 reads the live state.
//
// Cost per request: O(eligible replicas) (one cache lookup per replica for the first prefix
// block, more only where it hits), because every replica's load enters its score; a scrape costs
// O(cached blocks of the fleet). Deterministic. Not thread-safe.
class PrefixAwareRouter : public Router {
 public:
  struct Options {
    double prefix_weight = 3.0;
    double queue_weight = 2.0;
    double kv_weight = 2.0;
    std::int64_t overload_outstanding = 16;
    SimTime scrape_interval = 0;
  };
  // Reads `router: {kind: prefix_aware, prefix_weight, queue_weight, kv_weight,
  // overload_outstanding, scrape_interval_ms}`; unknown keys and bad values are InputErrors.
  static Options parse(const ConfigNode& node);

  PrefixAwareRouter() = default;
  explicit PrefixAwareRouter(const Options& options) : o_(options) {}
  std::string_view name() const override { return "prefix_aware"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

  // The share of `request`'s cacheable prefix replica `id` holds as the router sees it (live or
  // as of the last scrape); 0 for a request without a cacheable prefix.
  double prefix_share(const Request& request, const Fleet& fleet, ReplicaId id) const;
  std::int64_t scrapes() const { return scrapes_; }

 private:
  struct Seen {  // one replica as of the last scrape
    std::int64_t outstanding = 0;
    double kv_use = 0;
    std::unordered_set<std::int64_t> ids;  // cached block ids at hash-block granularity
  };
  void scrape(const Fleet& fleet, SimTime now);
  std::int64_t outstanding(const Fleet& fleet, ReplicaId id) const;
  double kv_use(const Fleet& fleet, ReplicaId id) const;

  Options o_;
  std::vector<Seen> seen_;
  SimTime next_scrape_ = 0;
  std::int64_t scrapes_ = 0;
  std::vector<std::int64_t> scratch_ids_;
  std::vector<double> scores_;
  LeastInTurn best_;  // the highest score (least negated score), ties in turn
};

}  // namespace servesim
