#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/workload.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/random_source.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// What a closed-loop workload's sessions (or agent tasks) did, for the run summary.
struct SessionCounts {
  std::int64_t started = 0;
  // Ended with their last request finished (all turns, or cut at max_prompt_tokens).
  std::int64_t completed = 0;
  std::int64_t cut_at_max_prompt = 0;   // of the completed: the next prompt was too long
  std::int64_t ended_by_rejection = 0;  // a request of theirs was refused; no more followed
  std::int64_t requests_finished = 0;   // turns (sessions) or requests (agent tasks)
  // Left out by a wrapper (workload.prompt_tokens) before the engine saw them; their sessions
  // went on as if they finished at their arrival (not in requests_finished).
  std::int64_t requests_left_out = 0;
  SimTime completed_time_sum = 0;  // first arrival to last completion, over completed
  double mean_session_s() const {
    return completed > 0 ? sim_to_s(completed_time_sum) / static_cast<double>(completed) : 0.0;
  }
};

// The shared part of the closed-loop workloads (SessionWorkload, AgenticWorkload): new sessions
// start at the arrival process's times (until num_sessions have started or start_s + duration_s
// is reached); the requests a completion makes wait in a queue ordered by (arrival, insertion).
// next() yields whichever comes first (a queued request on a tie) and nullopt while nothing is
// known yet; after num_requests requests (when given) it yields nothing more, so the sessions
// then in flight are cut short. State: O(1) per session in flight plus the queued requests. Not
// thread-safe.
class ClosedLoopBase : public Workload, public ClosedLoopWorkload {
 public:
  std::optional<RequestSpec> next() final;
  void give_back(RequestSpec spec) final;
  void on_request_left_out(const RequestSpec& spec) final;
  ClosedLoopWorkload* closed_loop() final { return this; }
  // num_requests, when given: the run yields at most that many.
  std::optional<std::int64_t> expected_requests() const final { return options_.num_requests; }
  const SessionCounts& session_counts() const { return counts_; }

 protected:
  ClosedLoopBase(const ArrivalSpec& arrivals, const WorkloadOptions& options,
                 std::optional<std::int64_t> num_sessions, std::uint64_t seed,
                 std::string arrival_where);
  // The first request of session `id` (0, 1, …) arriving at `at`.
  virtual RequestSpec start_session(std::int64_t id, SimTime at) = 0;
  // Queues a request made by a completion (arrival ≥ that completion).
  void push(RequestSpec spec);
  void end_completed(SimTime started, SimTime now) {
    ++counts_.completed;
    counts_.completed_time_sum += now - started;
  }

  SessionCounts counts_;
  RandomSource rng_;  // counts and think times (its own seed stream)

 private:
  struct Queued {
    RequestSpec spec;
    std::int64_t seq = 0;
  };
  // Heap order: the earliest arrival on top, then the earliest queued.
  static bool later(const Queued& a, const Queued& b) {
    return a.spec.arrival != b.spec.arrival ? a.spec.arrival > b.spec.arrival : a.seq > b.seq;
  }
  void draw_start();

  ArrivalProcess arrivals_;
  WorkloadOptions options_;
  std::optional<std::int64_t> num_sessions_;
  std::optional<SimTime> next_start_;
  bool starts_done_ = false;
  std::vector<Queued> queue_;
  std::int64_t seq_ = 0;
  std::int64_t yielded_ = 0;  // less those handed back
};

// The session counts of a closed-loop workload (itself or the one a wrapper holds); nullptr for
// any other.
const SessionCounts* session_counts(const Workload& workload);

// The prefix-cache block hashes of a prompt of `prompt_tokens` tokens in session (or task) `root`:
// one chain value per kSessionHashTokens tokens (PrefixHashes). Its first `shared_tokens` tokens
// are the session's common history, the same content at the same positions in every prompt of
// the session; the rest is branch `branch`'s own (a tool call's suffix). So two prompts of one
// session agree on a hash block exactly when it lies within both of their shared parts, or
// both are of the same branch.
inline constexpr std::int32_t kSessionHashTokens = 16;
std::shared_ptr<const PrefixHashes> session_hashes(std::int64_t root, std::int32_t prompt_tokens,
                                                   std::int32_t shared_tokens, std::int64_t branch);

}  // namespace servesim
