#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/error_model.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "tools/costmodel/tie_rank.hpp"

namespace servesim::decide {

// How often the predicted order of one step shape holds under the error model's band draws
// (`costmodel rank --bands`). `p[i]` is the time of `gpus[i]` for a step of kind `kind` priced by
// `cost_model`; each draw scales every GPU's time by its regime's factor at the draw's level
// (band_level with seed 0: the 10th, 50th, 90th percentiles, then seeded levels) and ranks again
// with the same tie rule. {"status": "measured", "draws", "holds", "others": [{"ranking",
// "draws"}]}, or {"status": "unmeasured", "unmeasured": [regimes]} when a GPU's regime has no
// data.
nlohmann::json rank_flips(const std::vector<Prediction>& p, const std::vector<const GpuSpec*>& gpus,
                          StepKind kind, const std::string& cost_model, const ErrorModel& model,
                          int draws);
// "order holds in 4 of 5 draws; h200 = h100-sxm < a100-80gb in 1", or "order unmeasured: …".
std::string rank_flips_text(const nlohmann::json& flips);

}  // namespace servesim::decide
