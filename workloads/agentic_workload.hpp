#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workloads/closed_loop_base.hpp"
#include "workloads/count_distribution.hpp"
#include "workloads/length_sampler.hpp"

namespace servesim {

// workload.agentic: agent tasks that fan out tool calls over a shared context.
struct AgenticSpec {
  std::optional<std::int64_t> num_tasks;
  LengthSpec root;                      // the root request's (prompt, output)
  CountSpec fan_out;                    // tool calls per task
  LengthSpec tool_calls;                // each tool call's (own suffix, output)
  std::optional<LengthSpec> aggregate;  // the aggregation request's (new message, output)
};

// Agent tasks in a closed loop. A task starts with a root request at the arrival process's time.
// When the root completes, F tool-call requests (F drawn from fan_out) arrive at once, each with
// the prompt root prompt + root output (the shared context) + its own suffix. With `aggregate`,
// one aggregation request arrives when all F have completed (or been refused), with the prompt
// context + every finished tool call's output + a new message. A refused root ends the task.
// Request turns: 0 the root, 1…F the tool calls, F + 1 the aggregation; the session is the task.
// Block hashes (session_hashes) make the context a prefix the tool calls and the aggregation
// share, and each tool call's suffix its own. The root's hashes cover its reply (part of the
// context), so the tool calls find the reply's full blocks cached; a tool call's reply is never
// reused: no later request extends a call's sequence (the aggregation quotes the results after
// the context, not after each call's suffix), so its hashes cover only its prompt. A task draws its
// fan-out and every length when it starts (tasks start in a fixed order), so a seed gives each task
// the same requests whatever the fleet does with them. Seed streams: arrivals, each length sampler,
// and fan-out counts. Not thread-safe.
class AgenticWorkload final : public ClosedLoopBase {
 public:
  AgenticWorkload(const ArrivalSpec& arrivals, AgenticSpec spec, const WorkloadOptions& options,
                  std::uint64_t seed, std::string arrival_where = "workload.arrival");

  std::string_view name() const override { return "agentic"; }
  void on_request_done(const RequestSpec& spec, SimTime now, bool rejected) override;

 private:
  struct Task {
    SimTime started = 0;
    std::int32_t context = 0;                                  // root prompt + root output
    std::vector<std::pair<std::int32_t, std::int32_t>> calls;  // (suffix, output) of each
    std::pair<std::int32_t, std::int32_t> aggregate{0, 0};     // (message, output)
    std::int32_t calls_left = 0;   // tool calls not yet completed or refused
    std::int64_t tool_output = 0;  // tokens the finished tool calls returned
  };
  RequestSpec start_session(std::int64_t id, SimTime at) override;
  static RequestSpec make(std::int64_t task, std::int32_t turn, SimTime at, std::int64_t prompt,
                          std::int32_t output, std::int32_t shared);
  static RequestSpec make_root(std::int64_t task, SimTime at, std::int32_t prompt,
                               std::int32_t output);

  AgenticSpec spec_;
  LengthSampler root_;
  LengthSampler tools_;
  std::optional<LengthSampler> aggregate_;
  std::unordered_map<std::int64_t, Task> active_;
};

}  // namespace servesim
