#include "workloads/count_distribution.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace servesim {
namespace {

// Counts are bounded so that a session or fan-out stays a modest number of requests.
constexpr std::int64_t kMaxCount = 100000;

std::int64_t read_count(const ConfigNode& node, std::string_view key) {
  const std::int64_t n = node.get_int(key);
  if (n < 1 || n > kMaxCount) {
    node.at(key).fail(
        fmt::format("{} is out of range (expected a count in [1, {}])", n, kMaxCount));
  }
  return n;
}

}  // namespace

std::int64_t draw_count(const CountSpec& spec, RandomSource& rng) {
  if (const auto* f = std::get_if<FixedCount>(&spec)) return f->count;
  if (const auto* u = std::get_if<UniformCount>(&spec)) return rng.uniform_int(u->min, u->max);
  const auto& g = std::get<GeometricCount>(spec);
  const double q = 1 - 1 / g.mean;
  if (q <= 0) return 1;
  const double k = 1 + std::floor(std::log(rng.uniform_open01()) / std::log(q));
  return std::min<std::int64_t>(g.max, static_cast<std::int64_t>(std::min(k, 1e15)));
}

double count_mean(const CountSpec& spec) {
  if (const auto* f = std::get_if<FixedCount>(&spec)) return static_cast<double>(f->count);
  if (const auto* u = std::get_if<UniformCount>(&spec)) {
    return 0.5 * static_cast<double>(u->min + u->max);
  }
  // E[min(K, M)] = Σ_{k=1..M} P(K ≥ k) = Σ q^(k−1) = (1 − q^M) / (1 − q).
  const auto& g = std::get<GeometricCount>(spec);
  const double q = 1 - 1 / g.mean;
  return g.mean * (1 - std::pow(q, static_cast<double>(g.max)));
}

CountSpec parse_count(const ConfigNode& node, std::string_view what) {
  node.require_map(fmt::format("a {} section ({{kind: fixed | uniform | geometric, …}})", what));
  const ConfigNode kind = node.at("kind");
  const std::string k = kind.as_string();
  if (k == "fixed") {
    node.check_keys({"kind", "count"});
    return FixedCount{read_count(node, "count")};
  }
  if (k == "uniform") {
    node.check_keys({"kind", "min", "max"});
    const std::int64_t lo = read_count(node, "min");
    const std::int64_t hi = read_count(node, "max");
    if (hi < lo)
      node.at("max").fail(fmt::format("{} is below min {} (expected max ≥ min)", hi, lo));
    return UniformCount{lo, hi};
  }
  if (k == "geometric") {
    node.check_keys({"kind", "mean", "max"});
    const double mean = node.get_positive("mean");
    if (mean < 1 || mean > static_cast<double>(kMaxCount)) {
      node.at("mean").fail(
          fmt::format("{} is out of range (expected a mean in [1, {}])", mean, kMaxCount));
    }
    return GeometricCount{mean, read_count(node, "max")};
  }
  kind.fail(fmt::format("unknown {} kind '{}' (known: fixed, geometric, uniform)", what, k));
}

}  // namespace servesim
