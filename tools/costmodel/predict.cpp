#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/registry.hpp"
#include "sim/config/input_error.hpp"
#include "tools/common/summary_table.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;
namespace {

const char* launch_name(StepLaunch l) {
  switch (l) {
    case StepLaunch::kEager:
      return "eager";
    case StepLaunch::kFullGraph:
      return "full CUDA graph";
    case StepLaunch::kPiecewiseGraph:
      return "piecewise CUDA graph";
  }
  return "?";
}

}  // namespace

std::string run_predict(const CostmodelArgs& a) {
  Context c = load(a, false);
  if (a.model.empty()) throw InputError("--model: required for predict");
  const ModelSpec& model = c.catalog.model(a.model, ConfigNode::flag("--model"));
  for (const auto& [flag, n] : {std::pair{"--attention-dp", a.attention_dp}, {"--ep", a.ep}}) {
    if (a.tp % n != 0) {
      throw InputError(fmt::format("{}: expected a divisor of --tp ({}), got {}", flag, a.tp, n));
    }
  }
  if (const std::string why = model.tp_problem(a.tp / a.attention_dp); !why.empty()) {
    throw InputError(a.attention_dp > 1 ? "--tp / --attention-dp: " + why : "--tp: " + why);
  }
  if (const std::string why = model.ep_problem(a.ep, a.attention_dp); !why.empty()) {
    throw InputError((a.ep > 1 ? "--ep: " : "--attention-dp: ") + why);
  }
  if (const std::string why = model.pp_problem(a.pp); !why.empty()) {
    throw InputError("--pp: " + why);
  }
  ReplicaSpec r;
  r.gpu = &c.gpu;
  r.model = &model;
  r.tp = a.tp;
  r.pp = a.pp;
  r.attention_dp = a.attention_dp;
  r.moe_ep = a.ep;
  r.cluster = a.cluster;
  if (const std::string why = r.cluster.stage_placement_problem(r.tp, r.pp); !why.empty()) {
    throw InputError("--tp: " + why + " (--gpus-per-node sets the node size)");
  }
  r.cuda_graphs = !a.eager;
  r.topology = a.topology;
  if (const std::string why = c.gpu.topology_problem(r.links()); !why.empty()) {
    throw InputError("--topology: " + why);
  }
  if (a.power_cap_w > 0) {
    if (const std::string why = c.gpu.power_cap_problem(a.power_cap_w); !why.empty()) {
      throw InputError("--power-cap-w: " + why);
    }
    r.power_cap_w = a.power_cap_w;
  }
  const auto precision = precision_named(a.precision);
  if (!precision) {
    throw InputError(
        fmt::format("--precision: unknown '{}' (known: {})", a.precision, precision_names()));
  }
  if (const std::string why = c.gpu.precision_problem(*precision); !why.empty()) {
    throw InputError(fmt::format("--precision {}: {}", a.precision, why));
  }
  r.weights = *precision;
  const ConfigNode cost_model = ConfigNode::parse(a.cost_model_yaml, "--cost-model");
  if (!a.graph_mode.empty()) {
    const auto mode = cuda_graph_mode_named(a.graph_mode);
    if (!mode) {
      throw InputError(
          fmt::format("--graph-mode: unknown '{}' (known: decode_only, piecewise)", a.graph_mode));
    }
    r.cuda_graph_mode = *mode;
  }
  r.cuda_graph_max_tokens = std::max(0, a.graph_max_tokens);
  // As simulate builds a replica.
  EngineProfile::default_graph_launch(EngineProfile::of_cost_model(cost_model).get(),
                                      !a.graph_mode.empty(), a.graph_max_tokens >= 0,
                                      a.max_num_seqs, r);
  BatchShape b;
  if (a.prefill_tokens > 0) b.prefills.push_back({a.prefill_tokens, a.context});
  b.decode_contexts.assign(static_cast<std::size_t>(std::max(0, a.decodes)), a.context);
  if (b.empty()) throw InputError("--tokens/--decodes: the batch is empty");
  if (a.decodes > 0 && a.context < 1) {
    throw InputError("--context: a decode attends to its context (expected --context ≥ 1)");
  }
  const std::int64_t longest =
      static_cast<std::int64_t>(a.context) + std::max(a.prefill_tokens, a.decodes > 0 ? 1 : 0);
  if (model.max_position_embeddings > 0 && longest > model.max_position_embeddings) {
    throw InputError(
        fmt::format("--context/--tokens: a sequence of {} tokens exceeds {}'s context ({} tokens)",
                    longest, model.name, model.max_position_embeddings));
  }
  const auto cm = make_cost_model(cost_model);
  if (const std::string why = cm->power_cap_problem(r.power_cap_w); !why.empty()) {
    throw InputError("--power-cap-w: " + why +
                     " (expected --cost-model kind analytical, or no cap)");
  }
  if (r.moe_parallel() && !cm->prices_moe_parallelism()) {
    throw InputError(fmt::format(
        "--ep/--attention-dp: the {} cost model does not price expert parallelism or attention "
        "data parallelism (expected --cost-model kind analytical)",
        cm->name()));
  }
  const StepCost cost = cm->step(b, r);
  const char* launch = launch_name(r.step_launch(!b.prefills.empty(), b.total_tokens()));
  if (a.json) {
    nlohmann::json j = {
        {"total_ns", cost.total_ns},
        {"launch", launch},
        {"topology", r.links()},
        {"power_cap_w", r.effective_power_cap_w()},
        {"energy_j", cost.energy_j > 0 ? nlohmann::json(cost.energy_j) : nlohmann::json(nullptr)}};
    for (std::size_t i = 0; i < kNumCostComponents; ++i) {
      j["breakdown_ns"][std::string(cost_component_name(static_cast<CostComponent>(i)))] =
          cost.breakdown_ns[i];
    }
    j["provenance"] = {{"constants", c.gpu.provenance},
                       {"validated", c.gpu.validated},
                       {"arch", c.gpu.arch},
                       {"memory_type", c.gpu.memory_type},
                       {"class_checked_on", c.catalog.class_checked_on(c.gpu)}};
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} on {}×{} (TP{}{} PP{}, {} weights, {}, {} W{}), {} prefill tokens + {} decodes, "
      "context {}, {}: {:.3f} ms\n",
      model.name, a.tp * a.pp, c.gpu.name, a.tp,
      r.moe_parallel() ? fmt::format(" DP{} EP{}", a.attention_dp, a.ep) : std::string(), a.pp,
      a.precision, r.links(), r.effective_power_cap_w(), r.power_cap_w > 0 ? " cap" : " TDP",
      a.prefill_tokens, a.decodes, a.context, launch, sim_to_ms(cost.total_ns));
  for (std::size_t i = 0; i < kNumCostComponents; ++i) {
    out += fmt::format("  {:<12} {:10.3f} ms\n", cost_component_name(static_cast<CostComponent>(i)),
                       cost.breakdown_ns[i] / 1e6);
  }
  if (cost.energy_j > 0) {
    out += fmt::format("  {:<12} {:10.3f} J   mean board power {:.0f} W\n", "energy", cost.energy_j,
                       cost.energy_j / sim_to_s(cost.total_ns));
  }
  // What a user pricing an unprofiled GPU must know: where its constants come from.
  out += fmt::format("constants  {}\n", c.gpu.provenance.empty()
                                            ? std::string("no provenance in the hardware file")
                                            : c.gpu.provenance);
  out += c.gpu.validated.empty()
             ? fmt::format("validated  nothing measured on this GPU; {}\n",
                           price_class_note(c.gpu.arch, c.gpu.memory_type,
                                            c.catalog.class_checked_on(c.gpu)))
             : fmt::format("validated  {}\n", fmt::join(c.gpu.validated, "\n           "));
  return out;
}

}  // namespace servesim
