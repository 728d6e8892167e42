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
    rep.seats = std::max(1, r->scheduler->seat_limit());
    reps_.push_back(rep);
  }
}

double PowerAwareRouter::stay_ns(const Rep& rep, const Replica& replica, const Request& request) {
  shape_.clear();
  later_.clear();
  replica.scheduler->decode_contexts(shape_.decode_contexts, later_);
  auto price = [&] { return static_cast<double>(cost_model_->step(shape_, rep.spec).total_ns); };

  // Its prefill, after the backlog, in steps beside the decodes running now.
  const auto decodes = static_cast<std::int32_t>(std::min<std::size_t>(
      shape_.decode_contexts.size(), static_cast<std::size_t>(rep.budget - 1)));
  shape_.decode_contexts.resize(static_cast<std::size_t>(decodes));
  const std::int32_t chunk = rep.budget - decodes;
  const std::int64_t tokens =
      replica.scheduler->prefill_backlog_tokens() + request.spec.prompt_tokens;
  const std::int64_t full = tokens / chunk;
  const auto rest = static_cast<std::int32_t>(tokens - full * chunk);
  double t = 0;
  if (full > 0) {
    shape_.prefills.push_back({chunk, 0});
    t += static_cast<double>(full) * price();
    shape_.prefills.clear();
  }
  if (rest > 0) {
    shape_.prefills.push_back({rest, 0});
    t += price();
    shape_.prefills.clear();
  }

  // Its decodes, beside every outstanding request (none here on a prefill replica: it hands the
  // request off at its first token).
  const std::int32_t steps =
      replica.role == ReplicaRole::kPrefill ? 0 : request.spec.output_tokens - 1;
  if (steps > 0) {
    shape_.decode_contexts.insert(shape_.decode_contexts.end(), later_.begin(), later_.end());
    shape_.decode_contexts.resize(
        std::min(shape_.decode_contexts.size(), static_cast<std::size_t>(rep.seats - 1)));
    shape_.decode_contexts.push_back(request.spec.prompt_tokens + request.spec.output_tokens / 2);
    t += static_cast<double>(steps) * price();
  }
  return t;
}

double PowerAwareRouter::estimate_ns(const Request& request, const Fleet& fleet, ReplicaId replica,
                                     SimTime now) {
  const auto i = static_cast<std::size_t>(replica);
  const Replica& r = *fleet[i];
  const SimTime in_flight = r.busy ? std::max<SimTime>(0, r.step_end - now) : 0;
  return static_cast<double>(in_flight) + stay_ns(reps_[i], r, request);
}

ReplicaId PowerAwareRouter::route(Request& request, const Fleet& fleet,
                                  const std::vector<ReplicaId>& eligible, SimTime now) {
  return least_.route(request, fleet, eligible, now,
                      [&](ReplicaId id) { return estimate_ns(request, fleet, id, now); });
}

}  // namespace servesim
