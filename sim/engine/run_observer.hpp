#pragma once

#include "sim/engine/batch_shape.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/records.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// Receives what happens in a run, in simulated-time order, as it happens (metrics, output
// writers, tests). Default implementations ignore the event.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // A step started on a replica; `cost` is its priced time.
  virtual void on_step(const StepRecord& /*step*/, const BatchShape& /*shape*/,
                       const StepCost& /*cost*/) {}
  // An output token was emitted; `gap_ns` is the time since the request's previous token
  // (-1 for its first token).
  virtual void on_token(const Request& /*request*/, SimTime /*now*/, SimTime /*gap_ns*/) {}
  // A request finished or was rejected; called once per request.
  virtual void on_request_done(const Request& /*request*/, bool /*rejected*/) {}
  // A KV transfer of disaggregated serving ended (its request is on the decode replica now).
  virtual void on_transfer(const TransferRecord& /*transfer*/) {}
};

}  // namespace servesim
