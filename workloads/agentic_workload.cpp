#include "workloads/agentic_workload.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/util/splitmix.hpp"

namespace servesim {

AgenticWorkload::AgenticWorkload(const ArrivalSpec& arrivals, AgenticSpec spec,
                                 const WorkloadOptions& options, std::uint64_t seed,
                                 std::string arrival_where)
    : ClosedLoopBase(arrivals, options, spec.num_tasks, seed, std::move(arrival_where)),
      spec_(std::move(spec)),
      root_(spec_.root, stream_seed(seed, 5)),
      tools_(spec_.tool_calls, stream_seed(seed, 6)) {
  if (spec_.aggregate) aggregate_.emplace(*spec_.aggregate, stream_seed(seed, 7));
}

RequestSpec AgenticWorkload::make(std::int64_t task, std::int32_t turn, SimTime at,
                                  std::int64_t prompt, std::int32_t output, std::int32_t shared) {
  // Prompts past what a request can hold are cut (the engine refuses what no replica fits).
  const auto p = static_cast<std::int32_t>(
      std::min<std::int64_t>(prompt, std::numeric_limits<std::int32_t>::max() / 2));
  RequestSpec r;
  r.arrival = at;
  r.prompt_tokens = p;
  r.output_tokens = output;
  r.session = task;
  r.turn = turn;
  r.prefix_tokens = p;
  r.hashes = session_hashes(task, p, std::min(shared, p), turn);
  return r;
}

RequestSpec AgenticWorkload::make_root(std::int64_t task, SimTime at, std::int32_t prompt,
                                       std::int32_t output) {
  RequestSpec r = make(task, 0, at, prompt, output, prompt);
  // Its reply is part of the context every later request of the task starts with: the hashes
  // run over prompt + output (all of it shared), so the tool calls find the reply's blocks.
  const auto covered = static_cast<std::int32_t>(std::min<std::int64_t>(
      std::int64_t{r.prompt_tokens} + output, std::numeric_limits<std::int32_t>::max() / 2));
  r.hashes = session_hashes(task, covered, covered, 0);
  r.hashes_cover_output = true;
  return r;
}

RequestSpec AgenticWorkload::start_session(std::int64_t id, SimTime at) {
  const auto [prompt, output] = root_.next();
  Task t;
  t.started = at;
  const std::int64_t fan_out = draw_count(spec_.fan_out, rng_);
  t.calls.reserve(static_cast<std::size_t>(fan_out));
  for (std::int64_t i = 0; i < fan_out; ++i) t.calls.push_back(tools_.next());
  if (aggregate_) t.aggregate = aggregate_->next();
  active_.emplace(id, std::move(t));
  return make_root(id, at, prompt, output);
}

void AgenticWorkload::on_request_done(const RequestSpec& spec, SimTime now, bool rejected) {
  const auto it = active_.find(spec.session);
  if (it == active_.end()) {
    throw std::logic_error(fmt::format("agentic: request of unknown task {}", spec.session));
  }
  Task& t = it->second;
  if (!rejected) ++counts_.requests_finished;
  const auto fan_out = static_cast<std::int32_t>(t.calls.size());
  const bool root = spec.turn == 0;
  const bool aggregation = spec.turn > fan_out;
  if ((root || aggregation) && rejected) {
    ++counts_.ended_by_rejection;
    active_.erase(it);
    return;
  }
  if (aggregation) {
    end_completed(t.started, now);
    active_.erase(it);
    return;
  }
  if (root) {
    t.context = static_cast<std::int32_t>(
        std::min<std::int64_t>(std::int64_t{spec.prompt_tokens} + spec.output_tokens,
                               std::numeric_limits<std::int32_t>::max() / 2));
    t.calls_left = fan_out;
    for (std::int32_t i = 1; i <= fan_out; ++i) {
      const auto [suffix, output] = t.calls[static_cast<std::size_t>(i - 1)];
      push(make(spec.session, i, now, std::int64_t{t.context} + suffix, output, t.context));
    }
    return;
  }
  if (!rejected) t.tool_output += spec.output_tokens;
  if (--t.calls_left > 0) return;
  if (!aggregate_) {
    end_completed(t.started, now);
    active_.erase(it);
    return;
  }
  const auto [message, output] = t.aggregate;
  push(
      make(spec.session, fan_out + 1, now, t.context + t.tool_output + message, output, t.context));
}

}  // namespace servesim
