#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedulers/router/round_robin_router.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Length-split pools: the replica groups of the config are split into named pools, and a request
// goes to the first pool whose `max_prompt_tokens` covers its prompt (the last pool has no bound
// and takes the rest), to the replica of that pool with the fewest outstanding requests (ties in
// turn). A request that fits no replica of its pool (the engine offers only those it fits on)
// goes to the next pool, then the previous ones, that has one. Routing costs O(replicas in the
// pool) per request, as least_outstanding does for the fleet.
class LengthSplitRouter : public Router {
 public:
  struct Pool {
    std::string name;
    std::vector<int> groups;                     // indexes into the config's `replicas:` list
    std::int64_t max_prompt_tokens = INT64_MAX;  // the last pool: no bound
  };
  struct Options {
    std::vector<Pool> pools;
    ConfigNode node;  // the router section, for errors found when the fleet is attached
  };
  // Reads {kind: length_split, pools: [{name, groups: [i, …], max_prompt_tokens}, …]}: at least
  // two pools, bounds rising, every pool but the last bounded, no group in two pools.
  static Options parse(const ConfigNode& node);
  explicit LengthSplitRouter(Options options) : options_(std::move(options)) {}

  std::string_view name() const override { return "length_split"; }
  // Every replica group must be in exactly one pool, and every pool's groups must exist.
  void attach(const Fleet& fleet, const CostModel& cost_model) override;
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;
  // The pool a prompt of `tokens` tokens is sent to first.
  std::size_t pool_of(std::int64_t tokens) const;

 private:
  Options options_;
  std::vector<std::size_t> pool_of_replica_;  // by replica id
  std::vector<LeastInTurn> least_;            // per pool
  std::vector<ReplicaId> candidates_;         // scratch: eligible replicas of one pool
};

}  // namespace servesim
