#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/config_node.hpp"
#include "sim/engine/request.hpp"

namespace servesim {

// Service-level objectives of a request; it meets them when every given bound holds. tbt_ms
// bounds every gap between the request's consecutive output tokens.
struct SloSpec {
  std::optional<double> ttft_ms;
  std::optional<double> tbt_ms;
  std::optional<double> tpot_ms;
  std::optional<double> e2e_ms;
  bool any() const { return ttft_ms || tbt_ms || tpot_ms || e2e_ms; }
  // Whether a served request with these latencies (ms; tpot 0 for a one-token request) meets
  // every bound.
  bool met(double ttft, double tbt_max, double tpot, double e2e) const;
};

// One SLO class of `slo: {classes: […]}`: its bounds and which requests are in it.
struct SloClass {
  std::string name;
  SloSpec bounds;
  double fraction = 0;                      // of the requests drawn at random (by_fraction)
  std::vector<std::int64_t> prefix_groups;  // requests of these prefix groups (by prefix group)
};

// The SLOs of a run (tools/README.md, "SLO classes"). Either one set of bounds for every request
// (`slo: {ttft_ms: 1000}`: one class, unnamed in summary.json) or named classes:
//   slo:
//     classes:
//       - {name: interactive, ttft_ms: 1000, fraction: 0.3}
//       - {name: batch, e2e_ms: 8000, prefix_groups: [2, 3]}
//       - {name: rest, e2e_ms: 20000}   # no fraction: takes what the others leave
// A request's class comes from its trace's `slo_class` column when the trace has one (a class
// name), else from its prefix group, else by a seeded draw over the fractions.
class SloPolicy {
 public:
  SloPolicy() = default;
  // Parses the `slo:` section.
  static SloPolicy parse(const ConfigNode& node);
  // One class with these bounds for every request.
  static SloPolicy single(SloSpec bounds);

  bool any() const { return !classes_.empty(); }
  bool named() const { return named_; }  // declared with `classes:`
  const std::vector<SloClass>& classes() const { return classes_; }
  // The class index of `name`, or -1.
  std::int32_t class_named(const std::string& name) const;
  // The class of a request without a trace class: by prefix group, else by `u` (uniform in
  // [0, 1), the request's seeded draw) over the fractions; -1 when no class takes it.
  std::int32_t classify(const RequestSpec& spec, double u) const;
  // The engine-time deadline of a request of class `c` arriving at `arrival`: its TTFT bound,
  // else its E2E bound, less the cost model's request overhead (which summary.json adds to TTFT
  // and E2E). kNoDeadline for a class with neither, or c = -1.
  SimTime deadline(std::int32_t c, SimTime arrival, SimTime request_overhead_ns) const;
  // Whether the deadline of class c is a TTFT bound (else an E2E bound, or none).
  bool deadline_is_ttft(std::int32_t c) const;
  // The seeded draw of request `id` in [0, 1) that classify() takes (splitmix64 of seed and id):
  // a request's class does not depend on the order or thread it was simulated in.
  static double draw(std::uint64_t seed, RequestId id);

 private:
  std::vector<SloClass> classes_;
  bool named_ = false;
  std::int32_t rest_ = -1;  // the class without a fraction, if any
};

}  // namespace servesim
