#include "sim/engine/slo.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/util/splitmix.hpp"

namespace servesim {

bool SloSpec::met(double ttft, double tbt_max, double tpot, double e2e) const {
  return (!ttft_ms || ttft <= *ttft_ms) && (!tbt_ms || tbt_max <= *tbt_ms) &&
         (!tpot_ms || tpot <= *tpot_ms) && (!e2e_ms || e2e <= *e2e_ms);
}

namespace {

constexpr const char* kBoundKeys[] = {"ttft_ms", "tbt_ms", "tpot_ms", "e2e_ms"};

SloSpec parse_bounds(const ConfigNode& n) {
  SloSpec s;
  auto bound = [&](std::string_view key) -> std::optional<double> {
    if (!n.has(key)) return std::nullopt;
    return n.get_positive(key);
  };
  s.ttft_ms = bound("ttft_ms");
  s.tbt_ms = bound("tbt_ms");
  s.tpot_ms = bound("tpot_ms");
  s.e2e_ms = bound("e2e_ms");
  return s;
}

}  // namespace

SloPolicy SloPolicy::single(SloSpec bounds) {
  SloPolicy p;
  if (!bounds.any()) return p;
  p.classes_.push_back(SloClass{"", bounds, 1.0, {}});
  p.rest_ = 0;
  return p;
}

SloPolicy SloPolicy::parse(const ConfigNode& node) {
  node.require_map("the slo section {ttft_ms, tbt_ms, tpot_ms, e2e_ms} or {classes: […]}");
  if (!node.has("classes")) {
    node.check_keys({"ttft_ms", "tbt_ms", "tpot_ms", "e2e_ms", "classes"});
    return single(parse_bounds(node));
  }
  node.check_keys({"classes"});
  const ConfigNode list = node.at("classes");
  if (!list.is_sequence() || list.items().empty()) {
    list.fail("expected a list of SLO classes [{name, ttft_ms | e2e_ms | …, fraction}, …]");
  }
  SloPolicy p;
  p.named_ = true;
  double fractions = 0;
  for (const ConfigNode& c : list.items()) {
    c.require_map("an SLO class {name, ttft_ms, tbt_ms, tpot_ms, e2e_ms, fraction, prefix_groups}");
    c.check_keys({"name", "ttft_ms", "tbt_ms", "tpot_ms", "e2e_ms", "fraction", "prefix_groups"});
    SloClass k;
    k.name = c.get_string("name");
    if (k.name.empty()) c.at("name").fail("expected a class name, got an empty value");
    if (p.class_named(k.name) >= 0) {
      c.at("name").fail(
          fmt::format("a second SLO class named '{}' (expected unique names)", k.name));
    }
    k.bounds = parse_bounds(c);
    if (!k.bounds.any()) {
      c.fail(fmt::format("SLO class '{}' has no bound (expected at least one of {})", k.name,
                         fmt::join(kBoundKeys, ", ")));
    }
    if (auto groups = c.find("prefix_groups")) {
      if (!groups->is_sequence()) groups->fail("expected a list of prefix group ids [0, 1, …]");
      for (const ConfigNode& g : groups->items()) {
        const std::int64_t id = g.as_int();
        if (id < 0) g.fail("expected a prefix group id ≥ 0");
        for (const SloClass& other : p.classes_) {
          if (std::count(other.prefix_groups.begin(), other.prefix_groups.end(), id) > 0) {
            g.fail(fmt::format("prefix group {} is already in class '{}'", id, other.name));
          }
        }
        k.prefix_groups.push_back(id);
      }
    }
    if (c.has("fraction")) {
      k.fraction = c.get_positive_fraction("fraction", 0);
      fractions += k.fraction;
      if (fractions > 1 + 1e-9) {
        c.at("fraction")
            .fail(fmt::format(
                "the class fractions sum to {:.4g} here, more than 1 (expected fractions of the "
                "requests that sum to at most 1)",
                fractions));
      }
    } else if (k.prefix_groups.empty()) {
      if (p.rest_ >= 0) {
        c.fail(fmt::format(
            "classes '{}' and '{}' both have no fraction and no prefix_groups (expected one "
            "class at most to take the requests the others leave)",
            p.classes_[static_cast<std::size_t>(p.rest_)].name, k.name));
      }
      p.rest_ = static_cast<std::int32_t>(p.classes_.size());
    }
    p.classes_.push_back(std::move(k));
  }
  if (p.rest_ < 0 && std::abs(fractions - 1) > 1e-9) {
    list.fail(fmt::format(
        "the class fractions sum to {:.4g} (expected 1, or one class without fraction and "
        "prefix_groups to take the rest)",
        fractions));
  }
  return p;
}

std::int32_t SloPolicy::class_named(const std::string& name) const {
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    if (classes_[i].name == name) return static_cast<std::int32_t>(i);
  }
  return -1;
}

std::int32_t SloPolicy::classify(const RequestSpec& spec, double u) const {
  if (spec.prefix_group >= 0) {
    for (std::size_t i = 0; i < classes_.size(); ++i) {
      const auto& g = classes_[i].prefix_groups;
      if (std::find(g.begin(), g.end(), spec.prefix_group) != g.end()) {
        return static_cast<std::int32_t>(i);
      }
    }
  }
  double cumulative = 0;
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    if (static_cast<std::int32_t>(i) == rest_) continue;
    cumulative += classes_[i].fraction;
    if (u < cumulative) return static_cast<std::int32_t>(i);
  }
  return rest_;
}

SimTime SloPolicy::deadline(std::int32_t c, SimTime arrival, SimTime request_overhead_ns) const {
  if (c < 0 || c >= static_cast<std::int32_t>(classes_.size())) return kNoDeadline;
  const SloSpec& b = classes_[static_cast<std::size_t>(c)].bounds;
  const std::optional<double> bound = b.ttft_ms ? b.ttft_ms : b.e2e_ms;
  if (!bound) return kNoDeadline;
  return arrival + ms_to_sim(*bound) - request_overhead_ns;
}

double SloPolicy::draw(std::uint64_t seed, RequestId id) {
  return unit_draw(stream_seed(seed, static_cast<std::uint64_t>(id)));
}

bool SloPolicy::deadline_is_ttft(std::int32_t c) const {
  return c >= 0 && c < static_cast<std::int32_t>(classes_.size()) &&
         classes_[static_cast<std::size_t>(c)].bounds.ttft_ms.has_value();
}

}  // namespace servesim
