#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "sim/config/config_node.hpp"
#include "workloads/random_source.hpp"

namespace servesim {

// Exactly `count` every time.
struct FixedCount {
  std::int64_t count = 1;
};
// Uniform over the integers [min, max].
struct UniformCount {
  std::int64_t min = 1;
  std::int64_t max = 1;
};
// Geometric on {1, 2, …} with the given mean (P(k) = p(1 − p)^(k−1), p = 1/mean), drawn by
// inverse CDF and cut at `max`.
struct GeometricCount {
  double mean = 1;
  std::int64_t max = 1;
};
// How many of something (turns of a session, tool calls of an agent step) a draw gives: ≥ 1.
using CountSpec = std::variant<FixedCount, UniformCount, GeometricCount>;

// One draw; deterministic for the state of `rng` on any standard library.
std::int64_t draw_count(const CountSpec& spec, RandomSource& rng);
// The mean of the draws (geometric: of the cut distribution).
double count_mean(const CountSpec& spec);

// Parses `{kind: fixed, count: N}`, `{kind: uniform, min: N, max: N}` or
// `{kind: geometric, mean: X, max: N}`; every count is in [1, 100000]. `what` names the section
// in messages ("workload.sessions.turns").
CountSpec parse_count(const ConfigNode& node, std::string_view what);

}  // namespace servesim
