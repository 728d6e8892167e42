#include "workloads/session_workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace servesim {

SessionWorkload::SessionWorkload(const ArrivalSpec& arrivals, SessionsSpec spec,
                                 const WorkloadOptions& options, std::uint64_t seed,
                                 std::string arrival_where)
    : ClosedLoopBase(arrivals, options, spec.num_sessions, seed, std::move(arrival_where)),
      spec_(std::move(spec)),
      lengths_(spec_.lengths, seed) {}

RequestSpec SessionWorkload::make_turn(std::int64_t session, std::int32_t turn, SimTime at,
                                       std::int32_t prompt, std::int32_t output) const {
  RequestSpec r;
  r.arrival = at;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.session = session;
  r.turn = turn;
  r.prefix_tokens = prompt;  // the whole prompt is history later turns repeat
  // And so is the reply: the hashes run over prompt + output, so its full blocks carry the keys
  // the next turn's prompt has at the same positions.
  const std::int64_t sequence = std::int64_t{prompt} + output;
  const auto covered = static_cast<std::int32_t>(
      std::min<std::int64_t>(sequence, std::numeric_limits<std::int32_t>::max()));
  r.hashes = session_hashes(session, covered, covered, 0);
  r.hashes_cover_output = true;
  return r;
}

RequestSpec SessionWorkload::start_session(std::int64_t id, SimTime at) {
  const std::int64_t turns = draw_count(spec_.turns, rng_);
  const auto [message, output] = lengths_.next();
  Session s{at, {}};
  s.later.reserve(static_cast<std::size_t>(turns - 1));
  for (std::int64_t k = 1; k < turns; ++k) {
    const auto [m, o] = lengths_.next();
    const double think = spec_.think_time_mean > 0
                             ? rng_.exponential(static_cast<double>(spec_.think_time_mean))
                             : 0.0;
    s.later.push_back({m, o, static_cast<SimTime>(std::llround(think))});
  }
  active_.emplace(id, std::move(s));
  // A first message longer than max_prompt_tokens is still sent (and counted as one turn).
  return make_turn(id, 0, at, message, output);
}

void SessionWorkload::on_request_done(const RequestSpec& spec, SimTime now, bool rejected) {
  const auto it = active_.find(spec.session);
  if (it == active_.end()) {
    throw std::logic_error(fmt::format("sessions: request of unknown session {}", spec.session));
  }
  Session& s = it->second;
  if (rejected) {
    ++counts_.ended_by_rejection;
    active_.erase(it);
    return;
  }
  ++counts_.requests_finished;
  const auto next = static_cast<std::size_t>(spec.turn);  // index of turn + 1 in `later`
  if (next >= s.later.size()) {
    end_completed(s.started, now);
    active_.erase(it);
    return;
  }
  const Planned& p = s.later[next];
  const std::int64_t prompt =
      std::int64_t{spec.prompt_tokens} + spec.output_tokens + std::int64_t{p.message};
  if (prompt > spec_.max_prompt_tokens) {
    ++counts_.cut_at_max_prompt;
    end_completed(s.started, now);
    active_.erase(it);
    return;
  }
  push(make_turn(spec.session, spec.turn + 1, now + p.think, static_cast<std::int32_t>(prompt),
                 p.output));
}

}  // namespace servesim
