#include "schedulers/router/power_aware_router.hpp"

#include <algorithm>

namespace servesim {

void PowerAwareRouter::attach(const Fleet& fleet, const CostModel& cost_model) {
  cost_model_ = &cost_model;
  reps_.clear();
  for (const auto& r : fleet) {
    Rep rep;
    rep.spec = r->spec;
    if (blind_) rep.spec.power_cap_w = 0;  // the TDP
    rep.budget = std::max(1, r->scheduler->token_budget());
    reps_.push_back(std::move(rep));
    reps_.back().full_step_ns = prefill_ns(reps_.back(), reps_.back().budget);
  }
}

double PowerAwareRouter::prefill_ns(const Rep& rep, std::int64_t tokens) const {
  const std::int64_t full = rep.full_step_ns > 0 ? tokens / rep.budget : 0;
  const std::int64_t rest = tokens - full * rep.budget;
  double t = static_cast<double>(full) * rep.full_step_ns;
  if (rest > 0) {
    t += static_cast<double>(
        cost_model_->lone_prefill(rep.spec, static_cast<std::int32_t>(rest)).total_ns);
  }
  return t;
}

ReplicaId PowerAwareRouter::route(Request& request, const Fleet& fleet,
                                  const std::vector<ReplicaId>& eligible, SimTime now) {
  return least_.route(request, fleet, eligible, now, [&](ReplicaId id) {
    const auto i = static_cast<std::size_t>(id);
    const Replica& r = *fleet[i];
    const SimTime in_flight = r.busy ? std::max<SimTime>(0, r.step_end - now) : 0;
    return static_cast<double>(in_flight) +
           prefill_ns(reps_[i], r.scheduler->prefill_backlog_tokens() + request.spec.prompt_tokens);
  });
}

}  // namespace servesim
