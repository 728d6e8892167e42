#pragma once

#include <span>

#include "sim/engine/batch_shape.hpp"
#include "sim/engine/cost_model.hpp"
#include "sim/engine/records.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// The output tokens one step emitted for one request: `tokens` (1, or with speculative decoding
// 1 + the accepted draft tokens, streamed as one chunk); `gap_ns` is the time since its previous
// chunk (-1 for its first).
struct TokenEvent {
  const Request* request = nullptr;
  SimTime gap_ns = -1;
  std::int32_t tokens = 1;
};

// Receives what happens in a run, in simulated-time order, as it happens (metrics, output
// writers, tests). Default implementations ignore the event.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // A step started on a replica; `cost` is its priced time.
  virtual void on_step(const StepRecord& /*step*/, const BatchShape& /*shape*/,
                       const StepCost& /*cost*/) {}
  // A step ended at `now` and emitted these output tokens, one event per request at most, in the
  // order of the step's batch. One call per step, not per token: most of a run's events are
  // tokens.
  virtual void on_tokens(std::span<const TokenEvent> /*tokens*/, SimTime /*now*/) {}
  // A request finished or was rejected; called once per request.
  virtual void on_request_done(const Request& /*request*/, bool /*rejected*/) {}
  // A KV transfer of disaggregated serving ended (its request is on the decode replica now).
  virtual void on_transfer(const TransferRecord& /*transfer*/) {}
};

}  // namespace servesim
