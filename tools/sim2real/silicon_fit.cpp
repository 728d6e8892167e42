#include "tools/sim2real/silicon_fit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/coordinate_search.hpp"
#include "tools/sim2real/mlenergy.hpp"

namespace servesim::sim2real {

std::optional<SiliconFitSet> silicon_fit_set(const std::string& name) {
  const auto file = EngineProfile::file_of(name);
  if (!file) return std::nullopt;
  const ConfigNode profile = ConfigNode::load_file(*file);
  const auto fitted = profile.find("fitted");
  const auto rows = fitted && fitted->is_map() ? fitted->find("silicon_rows") : std::nullopt;
  if (!rows) return std::nullopt;
  rows->require_map("the fit rows {backend, model, system, isl, osl}");
  rows->check_keys({"backend", "model", "system", "isl", "osl"});
  return SiliconFitSet{rows->get_string("backend"), rows->get_string("model"),
                       rows->get_string("system"), rows->get_positive_int("isl"),
                       rows->get_positive_int("osl")};
}

SiliconFit fit_silicon_engine(const std::vector<SiliconRow>& rows, const std::string& backend,
                              const SiliconOptions& options) {
  const auto engine = options.engines.find(backend);
  if (engine == options.engines.end()) {
    throw InputError(fmt::format("--fit {}: no engine profile for that backend", backend));
  }
  SiliconFit f;
  f.engine = engine->second;
  const auto set = silicon_fit_set(f.engine);
  if (!set || set->backend != backend) {
    throw InputError(
        fmt::format("--fit {}: engine profile '{}' declares no fit rows of {} (expected fitted: "
                    "{{silicon_rows: {{backend, model, system, isl, osl}}}} in its file)",
                    backend, f.engine, backend));
  }
  std::vector<SiliconRow> fit_rows;
  for (const SiliconRow& r : rows) {
    if (set->contains(r)) fit_rows.push_back(r);
  }
  Catalog catalog(Catalog::default_dirs());
  for (const SiliconRow& r : fit_rows) {
    const SiliconPlan plan = plan_silicon_row(r, catalog, options);
    if (!plan.not_run.empty()) {
      throw InputError(fmt::format("--fit {}: fit row {} ({}) cannot run: {}", backend, r.id,
                                   r.where, plan.not_run));
    }
    f.rows.push_back(r.id);
  }
  if (fit_rows.empty()) {
    throw InputError(
        fmt::format("--fit {}: the file has no row of the declared fit set ({} on {} "
                    "at {}/{})",
                    backend, set->model, set->system, set->isl, set->osl));
  }
  const auto profile = EngineProfile::load(ConfigNode::parse(f.engine, "--fit"));
  const ConfigNode where = ConfigNode::flag("--fit");
  const std::string gpu_name = silicon_system_gpu(set->system);
  const GpuSpec& gpu = catalog.gpu(gpu_name, where);
  f.gpu = gpu.name;
  // Start from the hardware file's constants and no overhead, so a refit reproduces the shipped
  // profile whatever it holds now.
  const AnalyticalParams start = AnalyticalParams::for_gpu(gpu);
  EngineConstants c;
  c.graph_floor_ns = start.host_graph_floor_ns;
  c.eager_floor_ns = start.host_eager_floor_ns;
  c.decode_bw_fraction = start.decode_attn_bw_fraction;
  c.request_overhead_ns[profile->name] = 0;
  auto objective = [&](const EngineConstants& k) {
    SiliconOptions o = options;
    o.engines[backend] = k.inline_yaml(profile->file, profile->name, f.gpu);
    double sum = 0;
    std::size_t n = 0;
    for (const SiliconResult& r : replay_silicon_rows(fit_rows, o)) {
      sum += std::abs(signed_error_pct(r.ttft_ms, r.row->ttft_ms)) +
             std::abs(signed_error_pct(r.tpot_ms, r.row->tpot_ms));
      n += 2;
    }
    const double v = sum / static_cast<double>(std::max<std::size_t>(1, n));
    f.log += fmt::format(
        "fit: graph {:7.0f} us  eager {:7.0f} us  decode attention {:.3f}  request {:.0f} us  "
        "mean APE {:.2f}%\n",
        k.graph_floor_ns / 1e3, k.eager_floor_ns / 1e3, k.decode_bw_fraction,
        k.request_overhead_ns.at(profile->name) / 1e3, v);
    return v;
  };
  // The bounds and first steps of `sim2real --fit` (fit.cpp), the overhead first.
  std::vector<SearchAxis> axes{{&c.request_overhead_ns[profile->name], 0, 50e6, 4e6},
                               {&c.decode_bw_fraction, 0.3, 0.9, 0.08},
                               {&c.graph_floor_ns, 0, 5e6, 1e6},
                               {&c.eager_floor_ns, 0, 10e6, 1e6}};
  for (const SearchAxis& a : axes) *a.value = std::clamp(*a.value, a.lo, a.hi);
  f.objective = coordinate_search(axes, 5, objective(c), [&] { return objective(c); });
  f.constants = c;
  f.log += fmt::format("fit: best on {} rows of {} on {} at {}/{}: mean APE {:.2f}%\n",
                       fit_rows.size(), set->model, set->system, set->isl, set->osl, f.objective);
  f.yaml = fmt::format(
      "# configs/engines/{}.yaml\nrequest_overhead_ns: {:.0f}\ngpus:\n  {}:\n    host: "
      "{{graph_floor_ns: {:.0f}, eager_floor_ns: {:.0f}}}\n    analytical: {{attention: "
      "{{decode_bw_fraction: {:.4f}}}}}\n# fitted: objective_pct {:.2f} on {} rows\n",
      profile->name, c.request_overhead_ns.at(profile->name), f.gpu, c.graph_floor_ns,
      c.eager_floor_ns, c.decode_bw_fraction, f.objective, fit_rows.size());
  return f;
}

}  // namespace servesim::sim2real
