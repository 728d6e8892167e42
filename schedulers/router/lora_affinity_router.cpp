#include "schedulers/router/lora_affinity_router.hpp"

#include <algorithm>

namespace servesim {

LoraAffinityRouter::Options LoraAffinityRouter::parse(const ConfigNode& node) {
  node.check_keys({"kind", "max_outstanding", "max_holders"});
  Options o;
  if (node.has("max_outstanding")) {
    const ConfigNode n = node.at("max_outstanding");
    const std::int64_t v = n.as_int();
    if (v < 0 || v > 1'000'000) {
      n.fail("expected an integer from 0 (each replica's max_num_seqs) to 1000000");
    }
    o.max_outstanding = v;
  }
  const std::int64_t holders = node.get_positive_int("max_holders", o.max_holders);
  if (holders > 1024) node.at("max_holders").fail("expected an integer from 1 to 1024");
  o.max_holders = static_cast<std::int32_t>(holders);
  return o;
}

ReplicaId LoraAffinityRouter::route(Request& request, const Fleet& fleet,
                                    const std::vector<ReplicaId>& eligible, SimTime now) {
  const auto outstanding = [&fleet](ReplicaId id) {
    return fleet[static_cast<std::size_t>(id)]->scheduler->num_outstanding();
  };
  const std::int32_t adapter = request.spec.adapter;
  if (adapter < 0) return least_loaded(request, fleet, eligible, now);
  std::vector<ReplicaId>& held = holders_[adapter];
  ReplicaId best = kNoReplica;
  std::int64_t best_load = 0;
  for (const ReplicaId id : held) {
    if (!std::binary_search(eligible.begin(), eligible.end(), id)) continue;
    const std::int64_t load = outstanding(id);
    const std::int64_t cap = o_.max_outstanding > 0
                                 ? o_.max_outstanding
                                 : fleet[static_cast<std::size_t>(id)]->scheduler->seat_limit();
    if (load < cap && (best == kNoReplica || load < best_load)) {
      best = id;
      best_load = load;
    }
  }
  if (best != kNoReplica) {
    ++hits_;
  } else {
    ++misses_;
    best = least_loaded(request, fleet, eligible, now);
  }
  // Most recent first; the oldest holder beyond max_holders is forgotten.
  const auto it = std::find(held.begin(), held.end(), best);
  if (it != held.end()) {
    std::rotate(held.begin(), it, it + 1);
  } else {
    held.insert(held.begin(), best);
    if (static_cast<std::int32_t>(held.size()) > o_.max_holders) held.pop_back();
  }
  return best;
}

}  // namespace servesim
