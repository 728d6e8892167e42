#pragma once

#include <cstdint>
#include <map>
#include <unordered_set>
#include <vector>

#include "schedulers/router/prefix_aware_index.hpp"
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
// Cost per request: the router keeps its replicas bucketed by load (LoadBuckets) and the replicas
// it sent each prefix to (SentPrefixes), and finds the same best replica a scan of every replica
// would by visiting bucket heads in order of the best score they could reach, with a cache lookup
// only where a prefix can be held: O(B log N) for B distinct loads when no replica can hold the
// prefix or few were sent it (at most 64 lookups); when many were (a fleet-wide system prompt),
// replicas are visited in score order until one holds as much as any can, which is the first
// visited when the shared blocks are cached everywhere. A request that fits on only some
// replicas, or a fleet of mixed KV block sizes, is scored by a scan: O(N). A scrape costs
// O(cached blocks of the fleet). Deterministic. Not thread-safe.
class PrefixAwareRouter : public Router {
 public:
  struct Options {
    double prefix_weight = 3.0;
    double queue_weight = 2.0;
    double kv_weight = 2.0;
    std::int64_t overload_outstanding = 16;
    SimTime scrape_interval = 0;
    // Replicas sent a prefix level that are scored one by one rather than bounded (not a
    // config key: tests lower it to exercise the bounds).
    std::size_t exact_holders = 64;
  };
  // Reads `router: {kind: prefix_aware, prefix_weight, queue_weight, kv_weight,
  // overload_outstanding, scrape_interval_ms}`; unknown keys and bad values are InputErrors.
  static Options parse(const ConfigNode& node);

  PrefixAwareRouter() = default;
  explicit PrefixAwareRouter(const Options& options) : o_(options) {}
  std::string_view name() const override { return "prefix_aware"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  void on_routable(const Fleet& fleet, const std::vector<ReplicaId>& routable) override;
  void on_replica_update(const Replica& replica) override;

  // The share of `request`'s cacheable prefix replica `id` holds as the router sees it (live or
  // as of the last scrape); 0 for a request without a cacheable prefix.
  double prefix_share(const Request& request, const Fleet& fleet, ReplicaId id) const;
  std::int64_t scrapes() const { return scrapes_; }
  // Requests routed from the load buckets (the rest by a scan).
  std::int64_t indexed_routes() const { return indexed_routes_; }

 private:
  struct Seen {  // one replica as of the last scrape
    std::int64_t outstanding = 0;
    double kv_use = 0;
    std::unordered_set<std::int64_t> ids;  // cached block ids at hash-block granularity
  };
  void scrape(const Fleet& fleet, SimTime now);
  // The buckets from the routable replicas' loads (live or as scraped).
  void rebuild(const Fleet& fleet);
  ReplicaId route_indexed(const Request& request, const Fleet& fleet);
  ReplicaId route_scan(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                       SimTime now);
  // The most prefix share a replica can have that was not sent the request's chain at hash
  // level m (so holds none of its blocks from that level on).
  double share_below_level(const Request& request, std::size_t m, std::int64_t tokens) const;
  std::int64_t outstanding(const Fleet& fleet, ReplicaId id) const;
  double kv_use(const Fleet& fleet, ReplicaId id) const;

  Options o_;
  std::vector<Seen> seen_;
  SimTime next_scrape_ = 0;
  std::int64_t scrapes_ = 0;
  std::vector<std::int64_t> scratch_ids_;
  std::vector<double> scores_;
  LeastInTurn best_;  // the highest score (least negated score), ties in turn
  // The index: on once the engine names the routable replicas; rebuilt when they change or a
  // scrape refreshes what the router sees.
  bool indexed_ = false;
  bool dirty_ = true;
  bool uniform_ = false;  // every routable replica has one block size and caching setting
  std::int32_t block_size_ = 0;
  bool caching_ = false;
  std::vector<ReplicaId> routable_;
  LoadBuckets loads_;
  SentPrefixes sent_;
  std::int64_t indexed_routes_ = 0;
  struct Range {   // a run of one bucket's replicas with equal KV terms
    double bound;  // the highest score any of them can have
    std::map<std::int64_t, LoadBuckets::Bucket>::const_iterator bucket;
    LoadBuckets::Bucket::const_iterator first;
    bool operator<(const Range& o) const { return bound < o.bound; }
  };
  std::vector<Range> ranges_;
};

}  // namespace servesim
