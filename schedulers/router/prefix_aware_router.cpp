#include "schedulers/router/prefix_aware_router.hpp"

#include <algorithm>

#include "sim/engine/kv_cache.hpp"

namespace servesim {
namespace {

// The tokens of a request's prefix that may come from a cache (as the replica schedulers count
// them: whole blocks of its hashed or grouped prefix, never its last prompt token).
std::int64_t cacheable_tokens(const Request& r, std::int32_t block_size) {
  if (!r.spec.hashes && r.spec.prefix_group < 0) return 0;
  const std::int64_t tokens =
      std::min<std::int64_t>(r.spec.prefix_tokens, r.spec.prompt_tokens - 1);
  return tokens > 0 ? tokens / block_size * block_size : 0;
}

// Block keys of r's prefix in a cache of `block_size` (no own-content keys: a router asks only
// about what other requests left).
BlockKeys prefix_keys(const Request& r, std::int32_t block_size) {
  if (r.spec.hashes)
    return BlockKeys::hashed(r.spec.hashes, r.spec.prefix_tokens, block_size, BlockKeys::kNone);
  return BlockKeys(r.spec.prefix_group, r.spec.prefix_tokens / block_size, BlockKeys::kNone);
}

// Hash blocks span this many KV blocks; the scrape summary keeps one id per hash block.
std::int64_t hash_stride(std::int32_t block_size) {
  const std::int32_t hash_tokens = PrefixHashes{}.block_tokens;
  return hash_tokens % block_size == 0 ? hash_tokens / block_size : 1;
}

}  // namespace

PrefixAwareRouter::Options PrefixAwareRouter::parse(const ConfigNode& node) {
  node.check_keys({"kind", "prefix_weight", "queue_weight", "kv_weight", "overload_outstanding",
                   "scrape_interval_ms"});
  Options o;
  o.prefix_weight = node.get_nonnegative("prefix_weight", o.prefix_weight);
  o.queue_weight = node.get_nonnegative("queue_weight", o.queue_weight);
  o.kv_weight = node.get_nonnegative("kv_weight", o.kv_weight);
  if (o.prefix_weight + o.queue_weight + o.kv_weight <= 0) {
    node.fail("prefix_weight, queue_weight and kv_weight are all 0 (expected at least one > 0)");
  }
  o.overload_outstanding = node.get_positive_int("overload_outstanding", o.overload_outstanding);
  const double interval_ms = node.get_nonnegative("scrape_interval_ms", 0);
  if (interval_ms > 3.6e6) {
    node.at("scrape_interval_ms").fail("expected at most 3600000 ms (one hour)");
  }
  o.scrape_interval = ms_to_sim(interval_ms);
  return o;
}

std::int64_t PrefixAwareRouter::outstanding(const Fleet& fleet, ReplicaId id) const {
  if (o_.scrape_interval > 0) return seen_[static_cast<std::size_t>(id)].outstanding;
  return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
}

double PrefixAwareRouter::kv_use(const Fleet& fleet, ReplicaId id) const {
  if (o_.scrape_interval > 0) return seen_[static_cast<std::size_t>(id)].kv_use;
  const KvCache& kv = fleet[static_cast<std::size_t>(id)]->kv;
  return kv.total_blocks() > 0
             ? static_cast<double>(kv.used_blocks()) / static_cast<double>(kv.total_blocks())
             : 0.0;
}

void PrefixAwareRouter::scrape(const Fleet& fleet, SimTime now) {
  seen_.resize(fleet.size());
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    const Replica& rep = *fleet[i];
    Seen& s = seen_[i];
    s.outstanding = rep.scheduler->num_outstanding();
    s.kv_use = rep.kv.total_blocks() > 0 ? static_cast<double>(rep.kv.used_blocks()) /
                                               static_cast<double>(rep.kv.total_blocks())
                                         : 0.0;
    scratch_ids_.clear();
    rep.kv.append_cached_ids(scratch_ids_, hash_stride(rep.kv.block_size()));
    s.ids.clear();
    s.ids.insert(scratch_ids_.begin(), scratch_ids_.end());
  }
  ++scrapes_;
  next_scrape_ = (now / o_.scrape_interval + 1) * o_.scrape_interval;
}

double PrefixAwareRouter::prefix_share(const Request& request, const Fleet& fleet,
                                       ReplicaId id) const {
  const KvCache& kv = fleet[static_cast<std::size_t>(id)]->kv;
  const std::int32_t bs = kv.block_size();
  const std::int64_t tokens = cacheable_tokens(request, bs);
  if (tokens <= 0 || !kv.prefix_caching()) return 0;
  const BlockKeys keys = prefix_keys(request, bs);
  if (o_.scrape_interval <= 0) {
    return static_cast<double>(kv.cached_prefix(keys, tokens / bs) * bs) /
           static_cast<double>(tokens);
  }
  const auto& ids = seen_[static_cast<std::size_t>(id)].ids;
  if (!request.spec.hashes) return ids.count(keys.group) > 0 ? 1.0 : 0.0;
  const PrefixHashes& h = *request.spec.hashes;
  std::int64_t matched = 0;
  while (matched * h.block_tokens < tokens && static_cast<std::size_t>(matched) < h.chain.size() &&
         ids.count(h.chain[static_cast<std::size_t>(matched)]) > 0) {
    ++matched;
  }
  return static_cast<double>(std::min(matched * h.block_tokens, tokens)) /
         static_cast<double>(tokens);
}

ReplicaId PrefixAwareRouter::route(Request& request, const Fleet& fleet,
                                   const std::vector<ReplicaId>& eligible, SimTime now) {
  if (o_.scrape_interval > 0 && (scrapes_ == 0 || now >= next_scrape_)) scrape(fleet, now);
  std::int64_t least = INT64_MAX;
  std::int64_t most = INT64_MIN;
  for (const ReplicaId id : eligible) {
    const std::int64_t o = outstanding(fleet, id);
    least = std::min(least, o);
    most = std::max(most, o);
  }
  scores_.assign(fleet.size(), 0.0);
  for (const ReplicaId id : eligible) {
    const std::int64_t o = outstanding(fleet, id);
    const double q =
        most > least ? static_cast<double>(most - o) / static_cast<double>(most - least) : 1.0;
    const double p = o > least + o_.overload_outstanding ? 0.0 : prefix_share(request, fleet, id);
    scores_[static_cast<std::size_t>(id)] =
        o_.prefix_weight * p + o_.queue_weight * q + o_.kv_weight * (1.0 - kv_use(fleet, id));
  }
  return best_.route(request, fleet, eligible, now,
                     [this](ReplicaId id) { return -scores_[static_cast<std::size_t>(id)]; });
}

}  // namespace servesim
