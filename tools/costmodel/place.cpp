#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "costmodels/registry.hpp"
#include "sim/config/input_error.hpp"
#include "tools/costmodel/command_context.hpp"
#include "tools/costmodel/costmodel_args.hpp"
#include "tools/costmodel/place_bands.hpp"
#include "tools/costmodel/placement.hpp"

namespace servesim {
using namespace costmodel_cmd;
namespace {

// "16384,64x8" → {16384, 64, 64, …}.
std::vector<int> parse_mix(const std::string& mix) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= mix.size()) {
    const std::size_t end = std::min(mix.find(',', pos), mix.size());
    const std::string item = mix.substr(pos, end - pos);
    const std::size_t x = item.find('x');
    long long tokens = 0;
    long long times = 1;
    try {
      std::size_t used = 0;
      const std::string head = item.substr(0, x);
      tokens = std::stoll(head, &used);
      if (used != head.size()) throw std::invalid_argument(item);
      if (x != std::string::npos) {
        const std::string tail = item.substr(x + 1);
        times = std::stoll(tail, &used);
        if (used != tail.size()) throw std::invalid_argument(item);
      }
    } catch (const std::logic_error&) {
      tokens = 0;
    }
    if (tokens < 1 || tokens > (1 << 20) || times < 1 || times > 64) {
      throw InputError(fmt::format(
          "--mix '{}': '{}' is not a chunk (expected TOKENS or TOKENSxCOUNT, 1 ≤ TOKENS ≤ "
          "1048576, 1 ≤ COUNT ≤ 64, comma-separated)",
          mix, item));
    }
    out.insert(out.end(), static_cast<std::size_t>(times), static_cast<int>(tokens));
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string run_place(const CostmodelArgs& a) {
  Context c = load(a, false);
  if (a.model.empty()) throw InputError("--model: required for place");
  const ModelSpec& model = c.catalog.model(a.model, ConfigNode::flag("--model"));
  if (a.caps.size() < 2) {
    throw InputError("--caps: one GPU per cap, at least two (e.g. --caps 400,575)");
  }
  if (a.mixes.empty()) throw InputError("--mix: at least one mix of chunks (e.g. 16384,64x8)");
  const auto cm = make_cost_model(ConfigNode::parse(a.cost_model_yaml, "--cost-model"));
  for (const double cap : a.caps) {
    if (std::string why = c.gpu.power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
    if (std::string why = cm->power_cap_problem(cap); !why.empty()) {
      throw InputError("--caps: " + why);
    }
  }
  // One prefill chunk of `tokens` (no context before it) on the GPU capped at `cap` (0: TDP).
  std::map<std::pair<int, double>, double> memo;
  auto price = [&](int tokens, double cap) {
    auto [it, fresh] = memo.try_emplace({tokens, cap}, 0.0);
    if (fresh) {
      ReplicaSpec r;
      r.gpu = &c.gpu;
      r.model = &model;
      r.power_cap_w = cap;
      it->second = static_cast<double>(cm->lone_prefill(r, tokens).total_ns);
    }
    return it->second;
  };
  struct Row {
    std::vector<int> chunks;
    Placement aware, blind, oracle;
    double blind_first_ns = 0;  // blind with its ties to the first GPU of --caps
  };
  std::vector<Row> rows;
  std::vector<PricedMix> priced;
  for (const std::string& mix : a.mixes) {
    Row row;
    row.chunks = parse_mix(mix);
    PriceTable capped, uncapped;
    for (const int t : row.chunks) {
      capped.emplace_back();
      uncapped.emplace_back();
      for (const double cap : a.caps) {
        capped.back().push_back(price(t, cap));
        uncapped.back().push_back(price(t, 0));
      }
    }
    row.aware = earliest_finish(capped);
    row.blind = earliest_finish(uncapped);
    row.blind_first_ns = makespan_ns(row.blind.gpu_of, capped);
    // Judged by the true prices, over every order of its tied GPUs.
    row.blind.makespan_ns = earliest_finish_makespan_over_orders(uncapped, capped);
    row.oracle = brute_force(capped, kOracleMaxAssignments, "--mix '" + mix + "'");
    priced.push_back({row.chunks, capped, uncapped, row.aware.gpu_of});
    rows.push_back(std::move(row));
  }
  int matches = 0;
  double gain_sum = 0, gain_max = 0, regret_sum = 0, first_sum = 0, first_max = 0;
  for (const Row& r : rows) {
    // Equal within the step times' rounding to the nanosecond.
    if (r.aware.makespan_ns <= r.oracle.makespan_ns * (1 + 1e-12)) ++matches;
    const double gain = 100 * (r.blind.makespan_ns / r.aware.makespan_ns - 1);
    gain_sum += gain;
    gain_max = std::max(gain_max, gain);
    regret_sum += 100 * (r.blind.makespan_ns / r.oracle.makespan_ns - 1);
    const double first = 100 * (r.blind_first_ns / r.aware.makespan_ns - 1);
    first_sum += first;
    first_max = std::max(first_max, first);
  }
  const double n = static_cast<double>(rows.size());
  nlohmann::json bands;
  if (a.bands) {
    const std::string file = a.cap_sweeps.empty() ? default_cap_sweeps_path() : a.cap_sweeps;
    bands = place_bands(priced, a.caps, c.gpu, c.params, load_cap_sweeps(file), a.band_draws);
  }
  if (a.json) {
    nlohmann::json j = {{"gpu", c.gpu.name},
                        {"model", model.name},
                        {"caps_w", a.caps},
                        {"aware_equals_oracle", matches},
                        {"mixes", rows.size()},
                        {"mean_gain_pct", gain_sum / n},
                        {"max_gain_pct", gain_max},
                        {"mean_blind_regret_pct", regret_sum / n},
                        {"mean_gain_first_order_pct", first_sum / n},
                        {"max_gain_first_order_pct", first_max},
                        {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) {
      j["rows"].push_back(
          {{"chunks", r.chunks},
           {"aware", {{"gpu_of", r.aware.gpu_of}, {"makespan_ms", r.aware.makespan_ns / 1e6}}},
           {"blind", {{"gpu_of", r.blind.gpu_of}, {"makespan_ms", r.blind.makespan_ns / 1e6}}},
           {"oracle", {{"gpu_of", r.oracle.gpu_of}, {"makespan_ms", r.oracle.makespan_ns / 1e6}}}});
    }
    if (a.bands) j["bands"] = bands;
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{}: {} GPUs capped at {} W, {}; prefill chunks placed by their capped prices (aware), "
      "by the uncapped price (blind: mean over the GPU orders its ties may take), and by "
      "enumeration (oracle); makespan in ms under the "
      "capped prices\n",
      c.title(), a.caps.size(), fmt::join(a.caps, " / "), model.name);
  out += fmt::format("{:<34} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "chunks (tokens)", "aware",
                     "blind", "oracle", "gain %", "regret %");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out += fmt::format("{:<34} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.2f} {:>9.2f}\n",
                       a.mixes[i].size() > 34 ? a.mixes[i].substr(0, 31) + "..." : a.mixes[i],
                       r.aware.makespan_ns / 1e6, r.blind.makespan_ns / 1e6,
                       r.oracle.makespan_ns / 1e6,
                       100 * (r.blind.makespan_ns / r.aware.makespan_ns - 1),
                       100 * (r.blind.makespan_ns / r.oracle.makespan_ns - 1));
  }
  out += fmt::format(
      "aware = oracle on {}/{} mixes; aware beats blind by {:.2f}% mean makespan (max {:.2f}%); "
      "blind regret vs oracle {:.2f}% mean; with blind's ties to the first GPU ({} W) the gain "
      "is {:.2f}% mean (max {:.2f}%)\n",
      matches, rows.size(), gain_sum / n, gain_max, regret_sum / n, a.caps[0], first_sum / n,
      first_max);
  if (a.bands) out += place_bands_text(bands, rows.size());
  return out;
}

}  // namespace servesim
