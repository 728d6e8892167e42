#include "schedulers/router/prefix_aware_router.hpp"

#include <algorithm>
#include <limits>

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

void PrefixAwareRouter::on_routable(const Fleet& /*fleet*/,
                                    const std::vector<ReplicaId>& routable) {
  indexed_ = true;
  dirty_ = true;
  routable_ = routable;
}

void PrefixAwareRouter::on_replica_update(const Replica& replica) {
  // A router that scrapes sees the state of its last scrape; a stale index is rebuilt anyway.
  if (o_.scrape_interval > 0 || dirty_ || !loads_.member(replica.id)) return;
  const KvCache& kv = replica.kv;
  const double use = kv.total_blocks() > 0 ? static_cast<double>(kv.used_blocks()) /
                                                 static_cast<double>(kv.total_blocks())
                                           : 0.0;
  loads_.set(replica.id, replica.scheduler->num_outstanding(), o_.kv_weight * (1.0 - use));
}

void PrefixAwareRouter::rebuild(const Fleet& fleet) {
  loads_.clear(fleet.size());
  uniform_ = true;
  for (const ReplicaId id : routable_) {
    loads_.set(id, outstanding(fleet, id), o_.kv_weight * (1.0 - kv_use(fleet, id)));
    const KvCache& kv = fleet[static_cast<std::size_t>(id)]->kv;
    if (id == routable_.front()) {
      block_size_ = kv.block_size();
      caching_ = kv.prefix_caching();
    }
    uniform_ = uniform_ && kv.block_size() == block_size_ && kv.prefix_caching() == caching_;
  }
  dirty_ = false;
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
  dirty_ = true;
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
  if (h.block_tokens != PrefixHashes{}.block_tokens) {
    // Hash blocks finer than the summary's stride (a session's 16-token blocks): walk the KV
    // blocks the summary keeps, every stride-th, each standing for the stride after it.
    const std::int64_t stride = hash_stride(bs);
    std::int64_t blocks = 0;
    while (blocks * bs < tokens) {
      const auto j = static_cast<std::size_t>(((blocks + 1) * bs - 1) / h.block_tokens);
      if (j >= h.chain.size() || ids.count(h.chain[j]) == 0) break;
      blocks += stride;
    }
    return static_cast<double>(std::min(blocks * bs, tokens)) / static_cast<double>(tokens);
  }
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
  if (!indexed_) return route_scan(request, fleet, eligible, now);
  // The engine offers a subset of the routable replicas: all of them when the sizes agree.
  if (eligible.size() == routable_.size() && dirty_) rebuild(fleet);
  const ReplicaId id = eligible.size() == routable_.size() && uniform_
                           ? route_indexed(request, fleet)
                           : route_scan(request, fleet, eligible, now);
  sent_.record(request.spec, id);
  return id;
}

ReplicaId PrefixAwareRouter::route_scan(Request& request, const Fleet& fleet,
                                        const std::vector<ReplicaId>& eligible, SimTime now) {
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

namespace servesim {

double PrefixAwareRouter::share_below_level(const Request& request, std::size_t m,
                                            std::int64_t tokens) const {
  const std::int64_t hb = request.spec.hashes->block_tokens;
  const std::int64_t level_tokens = static_cast<std::int64_t>(m) * hb;
  if (o_.scrape_interval > 0 && hb == PrefixHashes{}.block_tokens) {
    // prefix_share counts whole hash blocks then
    return static_cast<double>(std::min(level_tokens, tokens)) / static_cast<double>(tokens);
  }
  if (o_.scrape_interval > 0) {
    // Finer hash blocks are matched at every stride-th KV block, each standing for the stride
    // after it: the walk stops at the first such block at or past level m.
    const std::int64_t stride = hash_stride(block_size_);
    const std::int64_t blocks = (level_tokens / block_size_ + stride - 1) / stride * stride;
    return static_cast<double>(std::min(blocks * block_size_, tokens)) /
           static_cast<double>(tokens);
  }
  const std::int64_t blocks = std::min(level_tokens / block_size_, tokens / block_size_);
  return static_cast<double>(blocks * block_size_) / static_cast<double>(tokens);
}

ReplicaId PrefixAwareRouter::route_indexed(const Request& request, const Fleet& fleet) {
  ++indexed_routes_;
  const std::int64_t least = loads_.least();
  const std::int64_t most = loads_.most();
  const auto q_of = [&](std::int64_t o) {
    return most > least ? static_cast<double>(most - o) / static_cast<double>(most - least) : 1.0;
  };
  // Which replicas can hold some of the prefix (holders), the few scored one by one (exact),
  // and the most share any other holder can have (bound).
  const std::vector<ReplicaId>* holders = nullptr;
  const std::vector<ReplicaId>* exact = nullptr;
  double bound = 0;
  const std::int64_t tokens = caching_ ? cacheable_tokens(request, block_size_) : 0;
  if (tokens > 0 && request.spec.hashes) {
    const std::vector<std::int64_t>& chain = request.spec.hashes->chain;
    holders = chain.empty() ? nullptr : sent_.sent(chain[0]);
    if (holders != nullptr) {
      std::size_t m = chain.size();  // the first recorded level few replicas were sent
      for (std::size_t j = 0; j < chain.size(); j = j == 0 ? 1 : 2 * j) {
        const std::vector<ReplicaId>* s = sent_.sent(chain[j]);
        if (s == nullptr || s->size() <= o_.exact_holders) {
          exact = s;
          m = j;
          break;
        }
      }
      bound = share_below_level(request, m, tokens);
    }
  } else if (tokens > 0) {
    holders = sent_.sent(request.spec.prefix_group);
    if (holders != nullptr && holders->size() <= o_.exact_holders) {
      exact = holders;
    } else {
      bound = 1.0;
    }
  }
  const auto in = [](const std::vector<ReplicaId>* v, ReplicaId id) {
    return v != nullptr && std::binary_search(v->begin(), v->end(), id);
  };
  const auto score = [&](ReplicaId id, bool may_hold) {
    const std::int64_t o = loads_.load(id);
    const double p =
        !may_hold || o > least + o_.overload_outstanding ? 0.0 : prefix_share(request, fleet, id);
    return o_.prefix_weight * p + o_.queue_weight * q_of(o) + loads_.kv_term(id);
  };
  // The winner is the best score, ties to the first id in turn (as LeastInTurn).
  const ReplicaId next = best_.next();
  const auto n = static_cast<ReplicaId>(fleet.size());
  double best = -std::numeric_limits<double>::infinity();
  ReplicaId best_pos = std::numeric_limits<ReplicaId>::max();
  ReplicaId chosen = kNoReplica;
  const auto consider = [&](ReplicaId id, double s) {
    const ReplicaId pos = id >= next ? id - next : id + n - next;
    if (s > best || (s == best && pos < best_pos)) {
      best = s;
      best_pos = pos;
      chosen = id;
    }
  };
  if (exact != nullptr) {
    for (const ReplicaId id : *exact) {
      if (loads_.member(id)) consider(id, score(id, true));
    }
  }
  // Every other replica, a run of equal KV terms of one bucket at a time, best bound first; a
  // run is done at the first replica in turn that reaches its bound.
  const auto bound_of = [&](std::int64_t o, double t) {
    const double b = holders != nullptr && o <= least + o_.overload_outstanding ? bound : 0.0;
    return o_.prefix_weight * b + o_.queue_weight * q_of(o) + t;
  };
  ranges_.clear();
  for (auto b = loads_.buckets().begin(); b != loads_.buckets().end(); ++b) {
    ranges_.push_back({bound_of(b->first, -b->second.begin()->first), b, b->second.begin()});
  }
  std::make_heap(ranges_.begin(), ranges_.end());
  while (!ranges_.empty()) {
    std::pop_heap(ranges_.begin(), ranges_.end());
    const Range r = ranges_.back();
    ranges_.pop_back();
    if (r.bound < best) break;
    const LoadBuckets::Bucket& bucket = r.bucket->second;
    const double negt = r.first->first;
    const auto visit = [&](ReplicaId id) {
      if (in(exact, id)) return false;
      const double s = score(id, in(holders, id));
      consider(id, s);
      return s >= r.bound;
    };
    const auto start = bucket.lower_bound({negt, next});
    bool reached = false;
    for (auto it = start; !reached && it != bucket.end() && it->first == negt; ++it) {
      reached = visit(it->second);
    }
    for (auto it = r.first; !reached && it != start; ++it) reached = visit(it->second);
    const auto after = bucket.upper_bound({negt, std::numeric_limits<ReplicaId>::max()});
    if (after != bucket.end()) {
      ranges_.push_back({bound_of(r.bucket->first, -after->first), r.bucket, after});
      std::push_heap(ranges_.begin(), ranges_.end());
    }
  }
  best_.took(chosen, fleet.size());
  return chosen;
}

}  // namespace servesim
