#include "workloads/closed_loop_config.hpp"

#include <limits>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/config/suggest.hpp"
#include "workloads/agentic_workload.hpp"
#include "workloads/registry.hpp"
#include "workloads/session_workload.hpp"

namespace servesim {
namespace {

// A think time longer than this is surely a unit mistake (it is also far inside the horizon).
constexpr double kMaxThinkTimeS = 1e6;
// Prompts grow by a turn's output and message; unbounded sessions stop below int32 overflow.
constexpr std::int32_t kUnboundedPrompt = std::numeric_limits<std::int32_t>::max() / 2;

// A per-request lengths section: any length kind that does not bring its own prefixes (those
// are whole workloads of their own, not the parts of a session).
LengthSpec read_lengths(const ConfigNode& section, std::string_view what) {
  const LengthEntry& entry = read_kind(section, what, length_entries());
  if (entry.capabilities.brings_own_prefixes) {
    section.at("kind").fail(fmt::format(
        "{} lengths cannot be of kind '{}' (it makes its own prefixes; expected fixed, trace, "
        "uniform or zipf)",
        what, entry.kind));
  }
  return entry.parse(section);
}

std::optional<std::int64_t> read_limit(const ConfigNode& section, std::string_view key) {
  if (!section.has(key)) return std::nullopt;
  return section.get_positive_int(key);
}

SessionsSpec read_sessions(const ConfigNode& s) {
  s.require_map("a sessions section");
  s.check_keys({"num_sessions", "turns", "lengths", "think_time_s", "max_prompt_tokens"});
  SessionsSpec spec;
  spec.num_sessions = read_limit(s, "num_sessions");
  spec.turns = parse_count(s.at("turns"), "workload.sessions.turns");
  spec.lengths = read_lengths(s.at("lengths"), "workload.sessions.lengths");
  const double think = s.get_nonnegative("think_time_s", 0.0);
  if (think > kMaxThinkTimeS) {
    s.at("think_time_s")
        .fail(fmt::format("{} s is too long (expected at most {:.0e} s)", think, kMaxThinkTimeS));
  }
  spec.think_time_mean = seconds_to_sim(think);
  spec.max_prompt_tokens = kUnboundedPrompt;
  if (s.has("max_prompt_tokens")) {
    const std::int64_t m = s.get_positive_int("max_prompt_tokens");
    if (m > kUnboundedPrompt) {
      s.at("max_prompt_tokens").fail(fmt::format("expected at most {}", kUnboundedPrompt));
    }
    spec.max_prompt_tokens = static_cast<std::int32_t>(m);
  }
  return spec;
}

AgenticSpec read_agentic(const ConfigNode& a) {
  a.require_map("an agentic section");
  a.check_keys({"num_tasks", "root", "fan_out", "tool_calls", "aggregate"});
  AgenticSpec spec;
  spec.num_tasks = read_limit(a, "num_tasks");
  spec.root = read_lengths(a.at("root"), "workload.agentic.root");
  spec.fan_out = parse_count(a.at("fan_out"), "workload.agentic.fan_out");
  spec.tool_calls = read_lengths(a.at("tool_calls"), "workload.agentic.tool_calls");
  if (const auto agg = a.find("aggregate")) {
    spec.aggregate = read_lengths(*agg, "workload.agentic.aggregate");
  }
  return spec;
}

}  // namespace

std::unique_ptr<Workload> make_closed_loop_workload(const ConfigNode& node,
                                                    const WorkloadOptions& options,
                                                    std::uint64_t seed) {
  if (node.has("sessions") && node.has("agentic")) {
    node.at("agentic").fail("cannot be combined with 'sessions' (expected one of them)");
  }
  const char* mine = node.has("sessions") ? "sessions" : "agentic";
  for (const char* other : {"trace", "lengths", "max_tokens", "shared_prefix"}) {
    if (node.has(other)) {
      node.at(other).fail(
          fmt::format("cannot be combined with '{}' (its section gives the lengths and the shared "
                      "prefixes)",
                      mine));
    }
  }
  if (!node.has("arrival")) {
    node.fail(fmt::format("'{}' needs 'arrival' (when sessions start)", mine));
  }
  const ConfigNode arrival = node.at("arrival");
  const ArrivalEntry& arrival_kind = read_kind(arrival, "arrival", arrival_entries());
  const ArrivalSpec arrivals = arrival_kind.parse(arrival);
  const std::string where = arrival.where() + ": workload.arrival";
  if (node.has("sessions")) {
    SessionsSpec spec = read_sessions(node.at("sessions"));
    if (!spec.num_sessions && !options.duration && !options.num_requests &&
        !arrival_kind.capabilities.ends_on_its_own) {
      node.at("sessions")
          .fail(
              "sessions never stop starting (expected sessions.num_sessions, duration_s or "
              "num_requests)");
    }
    return std::make_unique<SessionWorkload>(arrivals, std::move(spec), options, seed, where);
  }
  AgenticSpec spec = read_agentic(node.at("agentic"));
  if (!spec.num_tasks && !options.duration && !options.num_requests &&
      !arrival_kind.capabilities.ends_on_its_own) {
    node.at("agentic").fail(
        "tasks never stop starting (expected agentic.num_tasks, duration_s or num_requests)");
  }
  return std::make_unique<AgenticWorkload>(arrivals, std::move(spec), options, seed, where);
}

}  // namespace servesim
