#include "tools/sim2real/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "sim/catalog.hpp"
#include "sim/config_node.hpp"
#include "sim/input_error.hpp"

namespace servesim::sim2real {

std::string default_held_out() { return "tv-l2-7b-general,5"; }

std::string EngineConstants::inline_yaml(const ConfigNode& base, const std::string& gpu) const {
  YAML::Node root = base.is_map() ? YAML::Clone(base.yaml()) : YAML::Node(YAML::NodeType::Map);
  root.remove("source");
  root.remove("fitted");
  root["name"] = "fit";
  root["request_overhead_ns"] = std::llround(request_overhead_ns);
  YAML::Node g = root["gpus"][gpu];
  g["host"]["graph_floor_ns"] = std::llround(graph_floor_ns);
  g["host"]["eager_floor_ns"] = std::llround(eager_floor_ns);
  g["analytical"]["attention"]["decode_bw_fraction"] = decode_bw_fraction;
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << root;
  return out.c_str();
}

FitResult fit_engine_constants(const std::vector<Experiment>& experiments,
                               const std::set<std::string>& held_out, const ReplayOptions& base,
                               const std::string& csv_path) {
  FitResult f;
  std::vector<const Experiment*> runs;
  Catalog catalog(Catalog::default_dirs());
  for (const auto& e : experiments) {
    if (e.trace_file.empty() || classify(e) == RunGroup::kOverloaded || held_out.count(e.id)) {
      continue;
    }
    const ConfigNode where = ConfigNode::parse(fmt::format("\"{}\"", e.hardware),
                                               fmt::format("{} run {}", csv_path, e.id));
    const std::string gpu = catalog.gpu(e.hardware, where).name;
    if (!f.gpu.empty() && gpu != f.gpu) {
      throw InputError(fmt::format(
          "--fit: the fit runs use two GPUs ({}, {}); hold out all but one", f.gpu, gpu));
    }
    f.gpu = gpu;
    runs.push_back(&e);
    f.runs.push_back(e.id);
  }
  if (runs.empty()) {
    throw InputError("--fit: no traced, non-overloaded run outside the held-out set");
  }
  // Start from the constants the base engine profile gives this GPU.
  const GpuSpec& gpu = catalog.gpu(f.gpu, ConfigNode::parse("x", "--fit"));
  AnalyticalParams start = AnalyticalParams::for_gpu(gpu);
  const auto profile = EngineProfile::load(ConfigNode::parse(base.engine, "--engine"));
  profile->apply(gpu, start);
  EngineConstants c{start.host_graph_floor_ns, start.host_eager_floor_ns,
                    start.decode_attn_bw_fraction, profile->request_overhead_ns};

  auto objective = [&](const EngineConstants& k) {
    ReplayOptions o = base;
    o.engine = k.inline_yaml(profile->file, f.gpu);
    // Mean over runs and over each run's seven metrics: every metric pulls (a run's median over
    // metrics would ignore the three TTFT metrics whenever E2E and ITL agree).
    double sum = 0;
    std::size_t n = 0;
    for (const Experiment* e : runs) {
      for (const MetricScore& s : replay(*e, o, csv_path).score.metrics) {
        sum += s.ape;
        ++n;
      }
    }
    const double v = sum / static_cast<double>(std::max<std::size_t>(1, n));
    f.log += fmt::format(
        "fit: graph {:7.0f} us  eager {:7.0f} us  decode attention {:.3f}  request {:7.0f} us  "
        "mean metric APE {:.2f}%\n",
        k.graph_floor_ns / 1e3, k.eager_floor_ns / 1e3, k.decode_bw_fraction,
        k.request_overhead_ns / 1e3, v);
    return v;
  };
  struct Axis {
    double EngineConstants::*field;
    double lo, hi, step;  // bounds and the first step (halved each round)
  };
  // The request overhead first: it moves TTFT alone, while the step constants move TTFT, E2E and
  // ITL together (a greedy search starting with them trades ITL for TTFT).
  const std::array<Axis, 4> axes = {{{&EngineConstants::request_overhead_ns, 0, 50e6, 4e6},
                                     {&EngineConstants::decode_bw_fraction, 0.3, 1.0, 0.08},
                                     {&EngineConstants::graph_floor_ns, 0, 5e6, 1e6},
                                     {&EngineConstants::eager_floor_ns, 0, 10e6, 1e6}}};
  for (const Axis& a : axes) c.*a.field = std::clamp(c.*a.field, a.lo, a.hi);
  double best = objective(c);
  for (int round = 0; round < 5; ++round) {
    const double scale = std::ldexp(1.0, -round);
    for (const Axis& a : axes) {
      for (const double dir : {-1.0, 1.0}) {
        for (;;) {
          EngineConstants t = c;
          t.*a.field = std::clamp(c.*a.field + dir * a.step * scale, a.lo, a.hi);
          if (t.*a.field == c.*a.field) break;
          const double v = objective(t);
          if (!(v < best - 1e-9)) break;
          best = v;
          c = t;
        }
      }
    }
  }
  f.constants = c;
  f.engine = c.inline_yaml(profile->file, f.gpu);
  f.objective = best;
  f.log += fmt::format("fit: best on {} runs ({}) of {}: mean metric APE {:.2f}%\n", runs.size(),
                       fmt::join(f.runs, ", "), f.gpu, best);
  f.yaml = fmt::format(
      "request_overhead_ns: {:.0f}\ngpus:\n  {}:\n    host: {{graph_floor_ns: {:.0f}, "
      "eager_floor_ns: {:.0f}}}\n    analytical: {{attention: {{decode_bw_fraction: {:.4f}}}}}\n"
      "fitted: {{runs: [{}], method: \"sim2real --fit: coordinate search minimising the mean APE "
      "of the seven metrics over the fit runs\", objective_pct: {:.2f}}}\n",
      c.request_overhead_ns, f.gpu, c.graph_floor_ns, c.eager_floor_ns, c.decode_bw_fraction,
      fmt::join(f.runs, ", "), best);
  return f;
}

}  // namespace servesim::sim2real
