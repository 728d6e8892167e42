#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "workloads/closed_loop_base.hpp"
#include "workloads/count_distribution.hpp"
#include "workloads/length_sampler.hpp"

namespace servesim {

// workload.sessions: multi-turn chat sessions run in a closed loop.
struct SessionsSpec {
  std::optional<std::int64_t> num_sessions;
  CountSpec turns;              // turns per session
  LengthSpec lengths;           // per turn: (new message tokens, output tokens)
  SimTime think_time_mean = 0;  // exponential, between a turn's completion and the next arrival
  std::int32_t max_prompt_tokens = 0;  // a session ends before a prompt longer than this
};

// Multi-turn sessions in a closed loop. Sessions start at the arrival process's times; each draws
// its number of turns. Turn 0's prompt is a new message; turn k+1 arrives an exponential think
// time (mean think_time_s) after turn k completes in the simulation, with the prompt
// turn k's prompt + turn k's output + a new message. A session draws its turns, their lengths
// and think times when it starts, and sessions start in a fixed order, so a seed gives every
// session the same turns whatever the fleet does with them (only the later arrival times
// differ: runs that compare routers serve the same sessions). A session ends after its last turn,
// when a turn is refused, or before a prompt longer than max_prompt_tokens. Each request carries
// its session and turn and block hashes over its whole prompt and its output (session_hashes,
// RequestSpec::hashes_cover_output), so a turn finds the earlier turns' prompt and reply blocks
// in a prefix cache, as vLLM V1 does: only the new message is prefilled. Seed streams: arrivals,
// lengths, and counts with think times. Not thread-safe.
class SessionWorkload final : public ClosedLoopBase {
 public:
  SessionWorkload(const ArrivalSpec& arrivals, SessionsSpec spec, const WorkloadOptions& options,
                  std::uint64_t seed, std::string arrival_where = "workload.arrival");

  std::string_view name() const override { return "sessions"; }
  void on_request_done(const RequestSpec& spec, SimTime now, bool rejected) override;

 private:
  // A later turn, drawn when its session starts.
  struct Planned {
    std::int32_t message = 0;
    std::int32_t output = 0;
    SimTime think = 0;
  };
  struct Session {
    SimTime started = 0;
    std::vector<Planned> later;  // turns 1, 2, …
  };
  RequestSpec start_session(std::int64_t id, SimTime at) override;
  RequestSpec make_turn(std::int64_t session, std::int32_t turn, SimTime at, std::int32_t prompt,
                        std::int32_t output) const;

  SessionsSpec spec_;
  LengthSampler lengths_;
  std::unordered_map<std::int64_t, Session> active_;
};

}  // namespace servesim
