#pragma once

#include <string>
#include <vector>

#include "tools/plan/plan.hpp"
#include "tools/sim2real/silicon_layouts.hpp"

namespace servesim::decide {

// `plan --layouts MODEL --system S`: the deployments of one model on one system searched
// (tools/sim2real/silicon_layouts.hpp), their frontier of output tokens/s per GPU against
// tokens/s per user, and the pick at each per-user speed.
struct LayoutPlanOptions {
  sim2real::LayoutQuery query;
  std::vector<std::string> formats;  // servesim's weight formats (bf16, fp8, fp8_block, nvfp4, …)
  std::vector<double> bounds = {10, 20, 35, 50, 75, 100, 150, 200};  // tokens/s per user
  double max_ttft_ms = kNaN;                                         // NaN: no TTFT bound
  std::uint64_t seed = 42;
  std::int64_t prompts_per_seat = 0;  // 0: InferenceX's client (10 per seat, 2 warm-ups)
  std::string out_dir;                // "" = out/layouts/<model>-<system>-<isl>x<osl>
  std::string bands_file;             // "" = data/measured/silicon_bands.yaml
  bool quiet = false;
};

// Runs the search and writes layouts.json and points.csv to the output folder; the report's text
// is the frontier and the picks. Throws InputError for bad input (an unknown model, system,
// engine or format; a budget below one GPU).
PlanReport run_layout_plan(LayoutPlanOptions options);

// The silicon file's (precision, gemm_quant) of one of servesim's weight formats; throws
// InputError naming the accepted ones.
sim2real::LayoutQuery::Format silicon_format(const std::string& format);

}  // namespace servesim::decide
