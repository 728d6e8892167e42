#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/request.hpp"

namespace servesim {

class ClosedLoopWorkload;

// A lazy source of requests. Yields them in non-decreasing arrival order and holds O(1) state per
// request it has not yet yielded (a 10M-request run must not hold 10M requests). Deterministic
// for a given seed. Not thread-safe.
class Workload {
 public:
  Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;
  virtual ~Workload() = default;

  virtual std::string_view name() const = 0;
  // The next request, or nullopt when the workload is exhausted. Throws InputError for a bad
  // trace row (naming file and line).
  virtual std::optional<RequestSpec> next() = 0;
  // How many requests it will yield, when that is known before the run (num_requests, a trace's
  // rows; at most that many when duration_s cuts it short): what progress counts towards.
  virtual std::optional<std::int64_t> expected_requests() const { return std::nullopt; }
  // The run's SLO class names (sim/engine/slo.hpp), before the first next(): a workload whose input
  // names a class per request (a trace's slo_class column) yields its index in
  // RequestSpec::slo_class and fails, naming file and line, on a name not in `names`.
  virtual void set_slo_classes(const std::vector<std::string>& /*names*/) {}
  // Multi-LoRA runs, before the first next(): the run serves `count` adapters. A workload whose
  // input names each request's adapter (a trace's `adapter` column) yields it in
  // RequestSpec::adapter (-1: the base model), fails naming file and line on one outside
  // [-1, count), and says so in names_adapters().
  virtual void set_lora_adapters(std::int32_t /*count*/) {}
  virtual bool names_adapters() const { return false; }
  // A benchmark client (workload.client) marks its warm-up requests (RequestSpec::warmup), which
  // the metrics leave out, and is reported as the client reports itself; a wrapper forwards the
  // inner workload's answer.
  virtual bool benchmark_client() const { return false; }
  // Its closed-loop role (ClosedLoopWorkload below): a closed-loop workload returns itself, a
  // workload that wraps another forwards the inner one's, so the engine reaches the role through
  // wrappers; nullptr for an open-loop workload.
  virtual ClosedLoopWorkload* closed_loop() { return nullptr; }
  const ClosedLoopWorkload* closed_loop() const {
    return const_cast<Workload*>(this)->closed_loop();  // NOLINT: returns it as const
  }
};

// The opt-in role of a closed-loop workload, whose later requests depend on when earlier ones end
// (a session's next turn comes a think time after its previous one completes). The engine finds
// it once, when it is built (Workload::closed_loop), and then tells it about every request that
// finished or was rejected. next() may return nullopt while requests are in flight and later
// yield more: the engine asks again after each completion it reports. Requests a completion at
// `now` makes arrive at or after `now`. Not thread-safe.
class ClosedLoopWorkload {
 public:
  ClosedLoopWorkload() = default;
  ClosedLoopWorkload(const ClosedLoopWorkload&) = delete;
  ClosedLoopWorkload& operator=(const ClosedLoopWorkload&) = delete;
  virtual ~ClosedLoopWorkload() = default;

  // A request it yielded finished (rejected: was refused) at `now`.
  virtual void on_request_done(const RequestSpec& spec, SimTime now, bool rejected) = 0;
  // Takes back a request next() yielded that has not arrived yet; next() yields it again in its
  // place. The engine hands back its held next arrival after completions, so that a follow-up
  // arriving earlier goes first.
  virtual void give_back(RequestSpec spec) = 0;
  // A wrapper left out a request next() yielded before the engine saw it (a prompt-length
  // filter): its session goes on as if it finished at its arrival, so the next turn still comes
  // (or the session ends after its last), never waiting on a request no replica serves.
  virtual void on_request_left_out(const RequestSpec& spec) = 0;
};

}  // namespace servesim
