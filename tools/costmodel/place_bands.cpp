#include "tools/costmodel/place_bands.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "costmodels/analytical/power_model.hpp"
#include "costmodels/analytical/power_sweep.hpp"
#include "run/bands.hpp"

namespace servesim {

nlohmann::json place_bands(const std::vector<PricedMix>& mixes, const std::vector<double>& caps,
                           const GpuSpec& gpu, const AnalyticalParams& params,
                           const std::map<std::string, CapSweep>& sweeps, int draws) {
  const auto it = sweeps.find(gpu.name);
  if (it == sweeps.end()) {
    return {{"status", "unmeasured"},
            {"why", fmt::format("no measured cap sweep of {} in the cap sweep file", gpu.name)}};
  }
  const CapSweep& s = it->second;
  for (const double cap : caps) {
    if (cap != s.low_cap_w && cap != s.high_cap_w) {
      return {{"status", "unmeasured"},
              {"why", fmt::format("the cap sweep of {} measured {} and {} W, not {} W", gpu.name,
                                  s.low_cap_w, s.high_cap_w, cap)}};
    }
  }
  const std::optional<PowerModel> pm = PowerModel::for_gpu(gpu);
  if (!pm) {
    return {{"status", "unmeasured"},
            {"why", fmt::format("{} has no power model to compare the sweep with", gpu.name)}};
  }
  std::vector<int> tokens;
  for (const auto& p : s.points) tokens.push_back(p.tokens);
  const PowerSweep priced =
      sweep_gemm_power(gpu, params, *pm, {s.low_cap_w, s.high_cap_w}, tokens, s.gemm_k, s.gemm_n);
  // Per point, ln(measured time ratio / priced time ratio) at the low and high ends of its range.
  std::vector<CapSweep::Point> error = s.points;
  for (std::size_t i = 0; i < error.size(); ++i) {
    const double keep = std::log(1 - priced.penalty_pct(i) / 100);
    error[i].low_pct = keep - std::log(1 - s.points[i].low_pct / 100);
    error[i].high_pct = keep - std::log(1 - s.points[i].high_pct / 100);
  }
  nlohmann::json out = {{"status", "measured"},
                        {"gpu", gpu.name},
                        {"caps_w", {s.low_cap_w, s.high_cap_w}},
                        {"draws", draws},
                        {"per_draw", nlohmann::json::array()}};
  int beats = 0;
  for (int d = 0; d < draws; ++d) {
    const double u = band_level(0, d, 0);
    double gain_sum = 0;
    double gain_max = -std::numeric_limits<double>::infinity();
    int matches = 0;
    for (const PricedMix& m : mixes) {
      PriceTable truth = m.capped;
      for (std::size_t j = 0; j < truth.size(); ++j) {
        const double scale = std::exp(interpolate_points(error, m.chunks[j], u));
        for (std::size_t g = 0; g < caps.size(); ++g) {
          if (caps[g] == s.low_cap_w) truth[j][g] *= scale;
        }
      }
      const double aware = makespan_ns(m.aware_gpu_of, truth);
      const double blind = earliest_finish_makespan_over_orders(m.uncapped, truth);
      const double oracle = brute_force(truth, kOracleMaxAssignments, "--bands").makespan_ns;
      const double gain = 100 * (blind / aware - 1);
      gain_sum += gain;
      gain_max = std::max(gain_max, gain);
      if (aware <= oracle * (1 + 1e-12)) ++matches;
    }
    const double mean = gain_sum / static_cast<double>(mixes.size());
    if (mean > 0) ++beats;
    out["per_draw"].push_back({{"level", u},
                               {"mean_gain_pct", mean},
                               {"max_gain_pct", gain_max},
                               {"aware_equals_oracle", matches}});
  }
  out["aware_beats_blind"] = beats;
  return out;
}

std::string place_bands_text(const nlohmann::json& b, std::size_t mixes) {
  if (b["status"] == "unmeasured") {
    return "bands: unmeasured: " + b["why"].get<std::string>() + "\n";
  }
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  int match_lo = std::numeric_limits<int>::max();
  int match_hi = 0;
  for (const auto& d : b["per_draw"]) {
    lo = std::min(lo, d["mean_gain_pct"].get<double>());
    hi = std::max(hi, d["mean_gain_pct"].get<double>());
    match_lo = std::min(match_lo, d["aware_equals_oracle"].get<int>());
    match_hi = std::max(match_hi, d["aware_equals_oracle"].get<int>());
  }
  return fmt::format(
      "bands: under the measured {:.0f}/{:.0f} W sweep of {} ({} draws), aware beats blind in {} "
      "of {} (mean gain {:+.2f} … {:+.2f}%); aware = oracle on {} of {} mixes\n",
      b["caps_w"][0].get<double>(), b["caps_w"][1].get<double>(), b["gpu"].get<std::string>(),
      b["draws"].get<int>(), b["aware_beats_blind"].get<int>(), b["draws"].get<int>(), lo, hi,
      match_lo == match_hi ? fmt::format("{}", match_lo) : fmt::format("{}–{}", match_lo, match_hi),
      mixes);
}

}  // namespace servesim
