#include "schedulers/router/length_split_router.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace servesim {

LengthSplitRouter::Options LengthSplitRouter::parse(const ConfigNode& node) {
  node.check_keys({"kind", "pools"});
  const ConfigNode list = node.at("pools");
  if (!list.is_sequence() || list.items().size() < 2) {
    list.fail("expected a list of at least two pools [{name, groups: [i, …], max_prompt_tokens}]");
  }
  Options o;
  o.node = node;
  const std::vector<ConfigNode> items = list.items();
  std::vector<int> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const ConfigNode& p = items[i];
    p.require_map("a pool {name, groups: [i, …], max_prompt_tokens}");
    p.check_keys({"name", "groups", "max_prompt_tokens"});
    Pool pool;
    pool.name = p.get_string("name", fmt::format("pool{}", i));
    const ConfigNode groups = p.at("groups");
    if (!groups.is_sequence() || groups.items().empty()) {
      groups.fail("expected a non-empty list of replica group indexes (0 = the first group)");
    }
    for (const ConfigNode& g : groups.items()) {
      const std::int64_t v = g.as_int();
      if (v < 0) g.fail("expected a replica group index ≥ 0");
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) {
        g.fail(fmt::format("replica group {} is in two pools", v));
      }
      seen.push_back(static_cast<int>(v));
      pool.groups.push_back(static_cast<int>(v));
    }
    const bool last = i + 1 == items.size();
    if (last) {
      if (p.has("max_prompt_tokens")) {
        p.at("max_prompt_tokens")
            .fail("the last pool takes every longer prompt: expected no max_prompt_tokens");
      }
    } else {
      pool.max_prompt_tokens = p.get_positive_int("max_prompt_tokens");
      if (!o.pools.empty() && pool.max_prompt_tokens <= o.pools.back().max_prompt_tokens) {
        p.at("max_prompt_tokens")
            .fail(fmt::format("expected more than the previous pool's {}",
                              o.pools.back().max_prompt_tokens));
      }
    }
    o.pools.push_back(std::move(pool));
  }
  return o;
}

void LengthSplitRouter::attach(const Fleet& fleet, const CostModel& /*cost_model*/) {
  int groups = 0;
  for (const auto& r : fleet) groups = std::max(groups, r->group + 1);
  std::vector<std::size_t> pool_of_group(static_cast<std::size_t>(groups), options_.pools.size());
  const std::vector<ConfigNode> items = options_.node.at("pools").items();
  for (std::size_t p = 0; p < options_.pools.size(); ++p) {
    for (std::size_t k = 0; k < options_.pools[p].groups.size(); ++k) {
      const int g = options_.pools[p].groups[k];
      if (g >= groups) {
        items[p].at("groups").items()[k].fail(
            fmt::format("no replica group {} (the config has {}: 0 to {})", g, groups, groups - 1));
      }
      pool_of_group[static_cast<std::size_t>(g)] = p;
    }
  }
  for (int g = 0; g < groups; ++g) {
    if (pool_of_group[static_cast<std::size_t>(g)] == options_.pools.size()) {
      options_.node.at("pools").fail(
          fmt::format("replica group {} is in no pool (expected every group in one)", g));
    }
  }
  pool_of_replica_.clear();
  for (const auto& r : fleet)
    pool_of_replica_.push_back(pool_of_group[static_cast<std::size_t>(r->group)]);
  least_ = std::vector<LeastInTurn>(options_.pools.size());
}

std::size_t LengthSplitRouter::pool_of(std::int64_t tokens) const {
  std::size_t p = 0;
  while (p + 1 < options_.pools.size() && tokens > options_.pools[p].max_prompt_tokens) ++p;
  return p;
}

ReplicaId LengthSplitRouter::route(Request& request, const Fleet& fleet,
                                   const std::vector<ReplicaId>& eligible, SimTime now) {
  const std::size_t first = pool_of(request.spec.prompt_tokens);
  const std::size_t n = options_.pools.size();
  // Its own pool, then the longer ones, then the shorter ones.
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t p = first + k < n ? first + k : n - 1 - k;
    candidates_.clear();
    for (const ReplicaId id : eligible) {
      if (pool_of_replica_[static_cast<std::size_t>(id)] == p) candidates_.push_back(id);
    }
    if (candidates_.empty()) continue;
    return least_[p].route(request, fleet, candidates_, now, [&fleet](ReplicaId id) {
      return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
    });
  }
  return eligible.front();  // unreachable: every replica is in a pool (attach)
}

}  // namespace servesim
