#include "tools/sim2real/fit.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  auto objective = [&](double decode_ns, double mixed_ns) {
    ReplayOptions o = base;
    o.extra_decode_step_ns = decode_ns;
    o.extra_mixed_step_ns = mixed_ns;
    double sum = 0;
    for (const Experiment* e : runs) sum += replay(*e, o, csv_path).score.overall;
    const double v = sum / static_cast<double>(runs.size());
    f.log += fmt::format("fit: decode {:+7.0f} us  mixed {:+7.0f} us  mean overall APE {:.2f}%\n",
                         decode_ns / 1e3, mixed_ns / 1e3, v);
    return v;
  };
  double d = base.extra_decode_step_ns;
  double m = base.extra_mixed_step_ns;
  double best = objective(d, m);
  // Coordinate search with a shrinking step: 1 ms, 0.25 ms, 0.05 ms.
  for (const double step : {1e6, 250e3, 50e3}) {
    bool improved = true;
    while (improved) {
      improved = false;
      for (int axis = 0; axis < 2; ++axis) {
        for (const double dir : {-1.0, 1.0}) {
          const double nd = axis == 0 ? d + dir * step : d;
          const double nm = axis == 1 ? m + dir * step : m;
          const double v = objective(nd, nm);
          if (v < best - 1e-9) {
            best = v;
            d = nd;
            m = nm;
            improved = true;
          }
        }
      }
    }
  }
  f.decode_step_ns = d;
  f.mixed_step_ns = m;
  f.objective = best;
  f.log += fmt::format("fit: best decode {:+.0f} us, mixed {:+.0f} us on {} runs ({}): {:.2f}%\n",
                       d / 1e3, m / 1e3, runs.size(), fmt::join(f.runs, ", "), best);
  return f;
}

}  // namespace servesim::sim2real
