#pragma once

#include <nlohmann/json.hpp>

#include "run/run_builder.hpp"
#include "sim/engine/autoscaler.hpp"

namespace servesim {

// summary["autoscaling"] of an autoscaled run: the policy, the price of a replica-hour (the
// section's `prices` file, else the catalog's prices/on-demand.yaml; null when the GPU has no
// price there), the totals (replica-hours billed while provisioning, active or draining, their
// dollars, $ per 1M output tokens) and the series of the evaluations as columns: per interval,
// the replicas after the decision, the metric, the arrival rate, the output tokens, the
// utilisation and the cumulative replica-hours and dollars. The series' replica-hours sum to the
// total. A static fleet gives the same series with min_replicas = max_replicas.
nlohmann::json autoscaling_summary(const Autoscaler& autoscaler, const BuiltRun& run);

}  // namespace servesim
