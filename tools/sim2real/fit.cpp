#include "tools/sim2real/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/catalog.hpp"
#include "sim/config_node.hpp"
#include "sim/input_error.hpp"

namespace servesim::sim2real {

std::string default_held_out() { return "tv-l2-7b-general,5"; }

FitResult fit_host_constants(const std::vector<Experiment>& experiments,
                             const std::set<std::string>& held_out, const ReplayOptions& base,
                             const std::string& csv_path) {
  FitResult f;
  std::vector<const Experiment*> runs;
  for (const auto& e : experiments) {
    if (e.trace_file.empty() || classify(e) == RunGroup::kOverloaded || held_out.count(e.id)) {
      continue;
    }
    runs.push_back(&e);
    f.runs.push_back(e.id);
  }
  if (runs.empty())
    throw InputError("--fit: no traced, non-overloaded run outside the held-out set");
  // Bounds: the host time of a step never goes below zero, i.e. an extra never takes more than
  // the analytical model's own host floor away; nor adds more than 5 ms (decode) / 10 ms (mixed).
  Catalog catalog(Catalog::default_dirs());
  const ConfigNode where = ConfigNode::parse("gpu: x", "sim2real fit");
  const AnalyticalParams params =
      AnalyticalParams::for_gpu(catalog.gpu(runs.front()->hardware, where.at("gpu")));
  f.decode_min_ns = -params.host_graph_floor_ns;
  f.mixed_min_ns = -params.host_eager_floor_ns;
  auto clamp = [](double v, double lo, double hi) { return std::min(hi, std::max(lo, v)); };
  auto objective = [&](double decode_ns, double mixed_ns, double request_ns) {
    ReplayOptions o = base;
    o.extra_decode_step_ns = decode_ns;
    o.extra_mixed_step_ns = mixed_ns;
    o.request_overhead_ns = request_ns;
    double sum = 0;
    for (const Experiment* e : runs) sum += replay(*e, o, csv_path).score.overall;
    const double v = sum / static_cast<double>(runs.size());
    f.log += fmt::format(
        "fit: decode {:+7.0f} us  mixed {:+7.0f} us  request {:7.0f} us  mean overall APE "
        "{:.2f}%\n",
        decode_ns / 1e3, mixed_ns / 1e3, request_ns / 1e3, v);
    return v;
  };
  double d = clamp(base.extra_decode_step_ns, f.decode_min_ns, 5e6);
  double m = clamp(base.extra_mixed_step_ns, f.mixed_min_ns, 10e6);
  double q = clamp(base.request_overhead_ns, 0, 50e6);
  double best = objective(d, m, q);
  // Coordinate search with a shrinking step: 1 ms, 0.25 ms, 0.05 ms.
  for (const double step : {1e6, 250e3, 50e3}) {
    bool improved = true;
    for (int round = 0; improved && round < 12; ++round) {
      improved = false;
      for (int axis = 0; axis < 3; ++axis) {
        for (const double dir : {-1.0, 1.0}) {
          const double nd = axis == 0 ? clamp(d + dir * step, f.decode_min_ns, 5e6) : d;
          const double nm = axis == 1 ? clamp(m + dir * step, f.mixed_min_ns, 10e6) : m;
          const double nq = axis == 2 ? clamp(q + dir * step, 0, 50e6) : q;
          if (nd == d && nm == m && nq == q) continue;
          const double v = objective(nd, nm, nq);
          if (v < best - 1e-9) {
            best = v;
            d = nd;
            m = nm;
            q = nq;
            improved = true;
          }
        }
      }
    }
  }
  f.decode_step_ns = d;
  f.mixed_step_ns = m;
  f.request_overhead_ns = q;
  f.objective = best;
  f.log += fmt::format(
      "fit: best decode {:+.0f} us, mixed {:+.0f} us, request {:.0f} us on {} runs ({}): "
      "{:.2f}%\n",
      d / 1e3, m / 1e3, q / 1e3, runs.size(), fmt::join(f.runs, ", "), best);
  return f;
}

}  // namespace servesim::sim2real
