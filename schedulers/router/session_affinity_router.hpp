#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "schedulers/router/least_outstanding_router.hpp"
#include "sim/config/config_node.hpp"
#include "sim/engine/router.hpp"

namespace servesim {

// Sticky routing by session (RequestSpec::session): a session's first request goes to the
// replica with the fewest outstanding requests (ties in turn, as least_outstanding), and its
// later requests to the same replica, where its history's KV blocks are cached, unless that
// replica is overloaded or cannot hold the request: then to the least loaded one, which becomes
// the session's replica. Overloaded: outstanding > overload_factor × max(fleet mean, 1), the
// mean over the eligible replicas as of the last scan. A request without a session goes to the
// least loaded replica.
// Cost: O(log N) per request (the eligibility lookup, and least_outstanding's index of loads for
// a first request or a fallback, which also refresh the mean; so does every Nth sticky request).
// A request that fits on only some replicas is routed by a scan. State: one entry per session
// seen. Deterministic; not thread-safe.
class SessionAffinityRouter : public LeastLoadedRouter {
 public:
  struct Options {
    double overload_factor = 2.0;
  };
  explicit SessionAffinityRouter(Options o) : o_(o) {}
  static Options parse(const ConfigNode& node);

  std::string_view name() const override { return "session_affinity"; }
  ReplicaId route(Request& request, const Fleet& fleet, const std::vector<ReplicaId>& eligible,
                  SimTime now) override;

  // Requests sent to their session's replica, and those that moved it (overload or no fit).
  std::int64_t sticky() const { return sticky_; }
  std::int64_t moved() const { return moved_; }

 private:
  // The eligible replicas' mean outstanding requests, into mean_.
  void refresh_mean(const Fleet& fleet, const std::vector<ReplicaId>& eligible);
  // The least loaded eligible replica; refreshes mean_.
  ReplicaId least_loaded_refreshing(Request& request, const Fleet& fleet,
                                    const std::vector<ReplicaId>& eligible, SimTime now);

  Options o_;
  std::unordered_map<std::int64_t, ReplicaId> home_;  // session -> its replica
  double mean_ = 0;                                   // fleet mean outstanding at the last scan
  std::int64_t since_scan_ = 0;                       // sticky requests since that scan
  std::int64_t sticky_ = 0;
  std::int64_t moved_ = 0;
};

}  // namespace servesim
