#include "costmodels/online/online_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/config/input_error.hpp"
#include "sim/util/units.hpp"

namespace servesim {

OnlineCostModel::OnlineCostModel(const CostModel& base, const Options& options)
    : base_(base), options_(options) {
  if (!(options.alpha > 0 && options.alpha <= 1)) {
    throw InputError("online learner: alpha must be in (0, 1]");
  }
  if (options.learn_requests < 0) {
    throw InputError("online learner: the number of requests to learn from must be ≥ 0");
  }
}

StepCost OnlineCostModel::step(const BatchShape& batch, const ReplicaSpec& replica) const {
  StepCost c = base_.step(batch, replica);
  const SimTime before = c.total_ns;
  if (options_.learn == Learn::kScale) {
    for (double& part : c.breakdown_ns) part *= step_scale_;
    c.stage_ns *= step_scale_;
    c.total_ns = std::max<SimTime>(
        1, static_cast<SimTime>(std::llround(static_cast<double>(c.total_ns) * step_scale_)));
  } else {
    const double host = c[CostComponent::kHost];
    if (min_host_ns_ < 0 || host < min_host_ns_) min_host_ns_ = host;
    // The learned floor moves the host component, which cannot go below zero.
    const double offset = std::max(step_offset_ns_, -host);
    c[CostComponent::kHost] = host + offset;
    c.total_ns = std::max<SimTime>(
        1, static_cast<SimTime>(std::llround(static_cast<double>(c.total_ns) + offset)));
  }
  // The replica idles through the time it adds (or saves).
  c.energy_j +=
      kJoulesPerWattNs * base_.idle_power_w(replica) * static_cast<double>(c.total_ns - before);
  return c;
}

SimTime OnlineCostModel::request_overhead_ns() const {
  const double base = static_cast<double>(base_.request_overhead_ns());
  return static_cast<SimTime>(std::llround(std::max(0.0, base + overhead_offset_ns_)));
}

bool OnlineCostModel::observe(const Observation& o) {
  if (options_.mode == Mode::kFrozen && o.id >= options_.learn_requests) return false;
  if (o.output_tokens > 1) {
    const double n = o.output_tokens - 1;
    const double measured_itl = (o.measured_e2e_ns - o.measured_ttft_ns) / n;
    const double simulated_itl = (o.simulated_e2e_ns - o.simulated_ttft_ns) / n;
    if (options_.learn == Learn::kScale) {
      if (simulated_itl > 0) step_scale_ *= 1 + options_.alpha * (measured_itl / simulated_itl - 1);
      step_scale_ = std::clamp(step_scale_, kMinScale, kMaxScale);
    } else {
      step_offset_ns_ += options_.alpha * (measured_itl - simulated_itl);
      step_offset_ns_ = std::max(step_offset_ns_, -std::max(0.0, min_host_ns_));
    }
  }
  const double base = static_cast<double>(base_.request_overhead_ns());
  const double overhead = base + overhead_offset_ns_;
  overhead_offset_ns_ += options_.alpha * (o.measured_ttft_ns - o.simulated_ttft_ns - overhead);
  overhead_offset_ns_ = std::max(overhead_offset_ns_, -base);
  history_.push_back(options_.learn == Learn::kScale ? step_scale_ : step_offset_ns_);
  return true;
}

}  // namespace servesim
