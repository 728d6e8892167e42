#pragma once

#include <functional>

#include "sim/engine/request.hpp"
#include "sim/engine/time.hpp"

namespace servesim {

// A fleet-level waiting queue that replicas pull requests from (a router that holds arrivals,
// e.g. schedulers/router/global_queue_router.hpp), instead of each request being sent to one
// replica when it arrives. A replica scheduler asks for the next request when its own waiting
// queue has nothing it may admit, admits it if it can, and only then takes it; a request it
// cannot admit stays in the fleet queue for any replica.
class FleetQueue {
 public:
  FleetQueue() = default;
  FleetQueue(const FleetQueue&) = delete;
  FleetQueue& operator=(const FleetQueue&) = delete;
  virtual ~FleetQueue() = default;

  // The next queued request in the queue's order that arrived by `cutoff` and that `fits`
  // (the replica's max_model_len and KV size) accepts; nullptr when there is none. May reorder
  // the queue first (e.g. demote a request whose deadline has passed).
  virtual Request* next_for(ReplicaId replica, SimTime now, SimTime cutoff,
                            const std::function<bool(const Request&)>& fits) = 0;
  // Removes `r`, which `replica` has just admitted.
  virtual void take(Request* r, ReplicaId replica, SimTime now) = 0;
  virtual std::int64_t size() const = 0;
};

// Optional interface of a replica scheduler that can pull from a fleet-level queue.
class FleetQueuePuller {
 public:
  virtual ~FleetQueuePuller() = default;
  // From now on, also admit from `queue` (in its order) whenever the own waiting queue has
  // nothing to admit; `self` is this scheduler's replica.
  virtual void attach_queue(FleetQueue* queue, ReplicaId self) = 0;
};

}  // namespace servesim
