#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "tools/costmodel/cap_sweep.hpp"
#include "tools/costmodel/placement.hpp"

namespace servesim {

// One mix of `costmodel place` as it was priced and placed: per piece and GPU the capped and the
// uncapped (TDP) price, and the power-aware placement made by the capped prices.
struct PricedMix {
  std::vector<int> chunks;
  PriceTable capped;
  PriceTable uncapped;
  std::vector<int> aware_gpu_of;
};

// `costmodel place --bands`: the comparison judged again under each draw of the GPU's measured
// cap sweep instead of the power model. Draw d takes level band_level(0, d, 0) of each measured
// point's range; the price of a piece on the lower-capped GPU is scaled by (1 - priced penalty) /
// (1 - measured penalty) of the swept GEMM at its token count (linear in log2 tokens between the
// points), the priced penalty being the analytical power model's on that GEMM; the higher cap is
// the reference and keeps its price. The aware placement stays as it was made; blind and the
// oracle are placed again as they would be. {"status": "measured", "draws", "aware_beats_blind"
// (draws with a positive mean gain), "per_draw": [{"level", "mean_gain_pct", "max_gain_pct",
// "aware_equals_oracle"}]}, or {"status": "unmeasured", "why"} when the GPU has no sweep, has no
// power model, or a cap is not one the sweep measured.
nlohmann::json place_bands(const std::vector<PricedMix>& mixes, const std::vector<double>& caps,
                           const GpuSpec& gpu, const AnalyticalParams& params,
                           const std::map<std::string, CapSweep>& sweeps, int draws);
// "aware beats blind in 2 of 5 draws of the measured cap sweep (mean gain -3.10 … +1.20%); aware
// = oracle on 2–4 of 6 mixes", or "bands: unmeasured: …".
std::string place_bands_text(const nlohmann::json& bands, std::size_t mixes);

}  // namespace servesim
