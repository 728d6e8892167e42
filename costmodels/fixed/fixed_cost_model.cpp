#include "costmodels/fixed/fixed_cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace servesim {

FixedCostModel::Params FixedCostModel::parse(const ConfigNode& node) {
  node.check_keys({"kind", "prefill_ns_per_token", "decode_ns_per_step", "decode_ns_per_request",
                   "step_floor_ns"});
  Params p;
  p.prefill_ns_per_token = node.get_nonnegative("prefill_ns_per_token", p.prefill_ns_per_token);
  p.decode_ns_per_step = node.get_nonnegative("decode_ns_per_step", p.decode_ns_per_step);
  p.decode_ns_per_request = node.get_nonnegative("decode_ns_per_request", p.decode_ns_per_request);
  p.step_floor_ns = node.get_nonnegative("step_floor_ns", p.step_floor_ns);
  return p;
}

StepCost FixedCostModel::step(const BatchShape& batch, const ReplicaSpec& /*replica*/) const {
  StepCost cost;
  if (batch.empty()) return cost;
  const double prefill = p_.prefill_ns_per_token * static_cast<double>(batch.prefill_tokens());
  const auto decodes = batch.num_decodes();
  const double decode =
      decodes > 0 ? p_.decode_ns_per_step + p_.decode_ns_per_request * static_cast<double>(decodes)
                  : 0.0;
  const double work = prefill + decode;
  const double total = std::max(work, p_.step_floor_ns);
  cost[CostComponent::kGemm] = prefill;
  cost[CostComponent::kAttention] = decode;
  cost[CostComponent::kHost] = total - work;
  cost.total_ns = std::max<SimTime>(1, std::llround(total));
  return cost;
}

}  // namespace servesim
