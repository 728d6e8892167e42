#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim {
using namespace costmodel_cmd;

std::string run_ablate(const CostmodelArgs& a) {
  Context c = load(a, true);
  AnalyticalTerms terms = AnalyticalTerms::all_off();
  nlohmann::json ladder = nlohmann::json::array();
  std::string out = fmt::format("{} — additive ablation ladder (MLP-block MAPE)\n", c.title());
  auto rung = [&](const std::string& label) {
    ErrorStats block, dec, pre;
    for (const auto& r : validate_all(c, c.params, terms)) {
      block.merge(r.slices.front().block);
      dec.merge(r.slices.front().decode_block);
      pre.merge(r.slices.front().prefill_block);
    }
    ladder.push_back({{"rung", label},
                      {"mlp_block_mape", block.mape()},
                      {"decode_mape", dec.mape()},
                      {"prefill_mape", pre.mape()}});
    out += fmt::format("  {:<22} {:6.2f}%   decode {:6.2f}%   prefill {:6.2f}%\n", label,
                       block.mape(), dec.mape(), pre.mape());
  };
  rung("roofline");
  for (std::size_t i = 0; i < AnalyticalTerms::kNames.size(); ++i) {
    const std::string_view name = AnalyticalTerms::kNames[i];
    if (name == "attention" || name == "collectives" || name == "host") continue;  // not in mlp.csv
    terms[i] = true;
    rung("+ " + std::string(name));
  }
  if (a.json) {
    nlohmann::json j{{"ladder", ladder}, {"not_in_catalog", uncataloged(c)}};
    c.stamp(j);
    return j.dump(2) + "\n";
  }
  return out + uncataloged_text(c);
}

}  // namespace servesim
