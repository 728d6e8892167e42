// The power and place subcommands, and predict under a power cap.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/costmodels/test_specs.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// `costmodel predict --json` of Llama-3.1-8B on an RTX 5090: one prefill chunk of `tokens` and
// `decodes` decodes at context 1024, under `cap` (0: the TDP).
nlohmann::json predict_5090(int tokens, int decodes, double cap, int tp = 1,
                            const std::string& hardware = "") {
  CostmodelArgs a;
  a.gpu = "rtx-5090";
  a.model = "meta-llama/Llama-3.1-8B";
  a.prefill_tokens = tokens;
  a.decodes = decodes;
  a.context = decodes > 0 ? 1024 : 0;
  a.power_cap_w = cap;
  a.tp = tp;
  a.hardware_file = hardware;
  a.json = true;
  return nlohmann::json::parse(run_predict(a));
}

}  // namespace

TEST_CASE(
    "a cap below the TDP slows prefill by its GEMMs' clocks, and at the TDP prices are as fitted",
    "[costmodels][power]") {
  // The 5090's file without its power section: the placeholder law, the pricing before it.
  const fs::path dir = fs::temp_directory_path() / "servesim_power_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path bare = dir / "rtx-5090.yaml";
  {
    std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/rtx-5090.yaml");
    std::ofstream out(bare);
    bool skip = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("power:", 0) == 0)
        skip = true;
      else if (skip && !line.empty() && line[0] != ' ')
        skip = false;
      if (!skip) out << line << "\n";
    }
  }
  auto price = [&](int tokens, int decodes, double cap, const std::string& hardware) {
    return predict_5090(tokens, decodes, cap, 1, hardware)["total_ns"].get<double>();
  };
  // At the TDP the power model changes nothing.
  CHECK(price(4096, 0, 0, "") == price(4096, 0, 0, bare.string()));
  CHECK(price(0, 64, 575, "") == price(0, 64, 575, bare.string()));
  // At 400 W a 4096-token prefill step pays about its GEMMs' 12% (13% with prefill attention;
  // light kernels keep their top clock there and the host floor is not clock-priced); a decode
  // step of 64 requests, whose
  // GEMMs stream weights below the cap's power, pays 2%.
  const double prefill = price(4096, 0, 400, "") / price(4096, 0, 575, "") - 1;
  CHECK(prefill > 0.10);
  CHECK(prefill < 0.14);
  const double decode = price(0, 64, 400, "") / price(0, 64, 575, "") - 1;
  CHECK(decode >= 0);
  CHECK(decode < prefill / 4);
  fs::remove_all(dir);
}

TEST_CASE(
    "costmodel power reports clock, power and TFLOP/s per cap and M, and refuses a GPU "
    "without a power section",
    "[costmodels][power]") {
  CostmodelArgs a;
  a.gpu = "rtx-5090";
  a.caps = {575, 400};
  a.token_counts = {64, 16384};
  a.json = true;
  const nlohmann::json j = nlohmann::json::parse(run_power(a));
  CHECK(j["caps_w"] == nlohmann::json({400.0, 575.0}));  // sorted
  REQUIRE(j["rows"].size() == 2);
  const nlohmann::json& big = j["rows"][1];
  CHECK(big["m"] == 16384);
  CHECK(big["cells"][0]["power_w"].get<double>() == Approx(400).margin(1));
  CHECK(big["cells"][0]["clock_mhz"].get<double>() < big["cells"][1]["clock_mhz"].get<double>());
  const double penalty =
      100 * (1 - big["cells"][0]["tflops"].get<double>() / big["cells"][1]["tflops"].get<double>());
  CHECK(big["penalty_pct"].get<double>() == Approx(penalty));
  // Two caps: the slope is the clock difference over the cap difference.
  CHECK(big["clock_slope_mhz_per_w"].get<double>() ==
        Approx((big["cells"][1]["clock_mhz"].get<double>() -
                big["cells"][0]["clock_mhz"].get<double>()) /
               175));
  a.json = false;
  CHECK_THAT(run_power(a), Contains("GPU rtx-5090") && Contains("16384"));
  a.gpu = "a100-40gb";
  a.hardware_file = testing::a100_without_power();
  CHECK_THROWS_WITH(run_power(a), Contains("--gpu a100-40gb") && Contains("power:"));
  a.hardware_file = "";
  a.gpu = "rtx-5090";
  a.caps = {300};
  CHECK_THROWS_WITH(run_power(a), Contains("--caps"));
}

TEST_CASE("a step's energy is idle power through it plus each kernel's own, under the cap",
          "[costmodels][power]") {
  auto predict = [](int tokens, int decodes, double cap, int tp = 1) {
    return predict_5090(tokens, decodes, cap, tp);
  };
  auto watts = [](const nlohmann::json& j) {
    return j["energy_j"].get<double>() / (j["total_ns"].get<double>() * 1e-9);
  };
  const nlohmann::json prefill = predict(4096, 0, 0);
  const nlohmann::json decode = predict(0, 16, 0);
  // Above idle (30 W), at most the TDP; a compute-bound prefill draws more than 16 decodes.
  CHECK(watts(prefill) > 400);
  CHECK(watts(prefill) <= 575);
  CHECK(watts(decode) > 30);
  CHECK(watts(decode) < watts(prefill));
  // Under 400 W the prefill draws less power for longer; its energy does not rise with the
  // power saved (f·V² falls faster than the time grows).
  const nlohmann::json slow = predict(4096, 0, 400);
  CHECK(watts(slow) <= 400);
  CHECK(watts(slow) < watts(prefill));
  CHECK(slow["energy_j"].get<double>() < prefill["energy_j"].get<double>());
  // Two GPUs of a TP pair: both idle through the step, each runs its shard.
  const nlohmann::json pair = predict(4096, 0, 0, 2);
  CHECK(watts(pair) > 2 * 30);
  CHECK(watts(pair) <= 2 * 575);
  // No power section: no energy.
  CostmodelArgs a;
  a.gpu = "a100-40gb";
  a.hardware_file = testing::a100_without_power();
  a.model = "meta-llama/Llama-3.1-8B";
  a.prefill_tokens = 512;
  a.json = true;
  CHECK(nlohmann::json::parse(run_predict(a))["energy_j"].is_null());
}

TEST_CASE("costmodel place: power-aware placement is never worse than cap-blind on the E2.8 mixes",
          "[costmodels][power]") {
  CostmodelArgs a;
  a.gpu = "rtx-5090";
  a.model = "meta-llama/Llama-3.1-8B";
  a.caps = {400, 575};
  // studies/e2_8_power_placement.sh
  a.mixes = {"4096,256x8",   "4096,512x12",  "8192,512x8",
             "8192,1024x12", "16384,1024x8", "16384,2048x12"};
  a.json = true;
  const nlohmann::json j = nlohmann::json::parse(run_place(a));
  REQUIRE(j["rows"].size() == 6);
  int matches = 0;
  for (const nlohmann::json& r : j["rows"]) {
    const double aware = r["aware"]["makespan_ms"].get<double>();
    const double blind = r["blind"]["makespan_ms"].get<double>();
    const double oracle = r["oracle"]["makespan_ms"].get<double>();
    CHECK(oracle <= aware);
    CHECK(aware <= blind);
    if (aware == oracle) ++matches;
    // The large chunk (piece 0) goes to the loose cap when placed by the capped prices.
    CHECK(r["aware"]["gpu_of"][0] == 1);
  }
  CHECK(j["aware_equals_oracle"] == matches);
  CHECK(matches >= 5);
  CHECK(j["mean_gain_pct"].get<double>() > 3);
  // Blind's ties sent to the 400 W GPU: never better than its mean over both orders.
  CHECK(j["mean_gain_first_order_pct"].get<double>() >= j["mean_gain_pct"].get<double>());
  // The figures studies/README.md and README.md report (regression guard).
  CHECK(matches == 5);
  CHECK(j["mean_gain_pct"].get<double>() == Approx(5.32).margin(0.005));
  CHECK(j["max_gain_pct"].get<double>() == Approx(6.67).margin(0.005));
  CHECK(j["mean_blind_regret_pct"].get<double>() == Approx(5.78).margin(0.005));
  CHECK(j["mean_gain_first_order_pct"].get<double>() == Approx(8.20).margin(0.005));
  CHECK(j["max_gain_first_order_pct"].get<double>() == Approx(13.34).margin(0.005));
  a.mixes = {"4096,abc"};
  CHECK_THROWS_WITH(run_place(a), Contains("--mix '4096,abc'") && Contains("TOKENSxCOUNT"));
  a.mixes = {"64x30"};  // 2^30 placements
  CHECK_THROWS_WITH(run_place(a), Contains("oracle") && Contains("2^30"));
  a.caps = {400};
  CHECK_THROWS_WITH(run_place(a), Contains("--caps"));
  a.caps = {100, 575};  // below the board's lowest cap
  a.mixes = {"64"};
  CHECK_THROWS_WITH(run_place(a), Contains("--caps"));
}
