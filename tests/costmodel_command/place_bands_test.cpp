// costmodel place --bands: the placement comparison judged under a GPU's measured cap sweep.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tools/costmodel/cap_sweep.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// The E2.8 study's arguments (studies/e2_8_power_placement.sh) with --bands.
CostmodelArgs e2_8(const std::string& sweeps = "") {
  CostmodelArgs a;
  a.gpu = "rtx-5090";
  a.model = "meta-llama/Llama-3.1-8B";
  a.caps = {400, 575};
  a.mixes = {"4096,256x8",   "4096,512x12",  "8192,512x8",
             "8192,1024x12", "16384,1024x8", "16384,2048x12"};
  a.json = true;
  a.bands = true;
  a.cap_sweeps = sweeps;
  return a;
}

// A sweep file of the 5090 at 400/575 W whose every point lost `pct` percent.
std::string flat_sweep(double pct) {
  const fs::path p =
      fs::temp_directory_path() / ("servesim_sweep_" + std::to_string(pct) + ".yaml");
  std::ofstream(p) << "rtx-5090:\n  gemm: {k: 4096, n: 6144}\n  caps_w: [400, 575]\n  points:\n"
                   << "    - {tokens: 64, penalty_pct: [" << pct << ", " << pct << "]}\n"
                   << "    - {tokens: 16384, penalty_pct: [" << pct << ", " << pct << "]}\n";
  return p.string();
}

std::string write(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("the measured sweep interpolates in log2 tokens between its points and is flat beyond",
          "[costmodels][power]") {
  const auto sweeps = load_cap_sweeps(default_cap_sweeps_path());
  const CapSweep& s = sweeps.at("rtx-5090");
  CHECK(s.low_cap_w == 400);
  CHECK(s.high_cap_w == 575);
  CHECK(interpolate_points(s.points, 1024, 0.5) == Approx(0.99));
  CHECK(interpolate_points(s.points, 4096, 0.1) == Approx(7.72));
  CHECK(interpolate_points(s.points, 4096, 0.9) == Approx(8.7));
  // 2048 is halfway between 1024 and 4096 in log2.
  CHECK(interpolate_points(s.points, 2048, 0.1) == Approx((0.99 + 7.72) / 2));
  CHECK(interpolate_points(s.points, 16, 0.5) == Approx(0.08));
  CHECK(interpolate_points(s.points, 1 << 16, 0.9) == Approx(12.1));
}

TEST_CASE("on the E2.8 mixes the measured sweep keeps the aware pick but halves its gain",
          "[costmodels][power]") {
  const nlohmann::json j = nlohmann::json::parse(run_place(e2_8()));
  const nlohmann::json& b = j["bands"];
  REQUIRE(b["status"] == "measured");
  REQUIRE(b["per_draw"].size() == 5);
  CHECK(b["per_draw"][0]["level"] == Approx(0.1));
  CHECK(b["per_draw"][2]["level"] == Approx(0.9));
  const double point = j["mean_gain_pct"].get<double>();
  for (const auto& d : b["per_draw"]) {
    // The measured penalty at 1024-4096 tokens is below the priced one: the aware placement's
    // edge over blind shrinks, yet stays positive.
    CHECK(d["mean_gain_pct"].get<double>() > 0);
    CHECK(d["mean_gain_pct"].get<double>() < point);
    CHECK(d["aware_equals_oracle"].get<int>() <= j["aware_equals_oracle"].get<int>());
  }
  CHECK(b["aware_beats_blind"] == 5);
  // A deeper measured penalty favours the aware placement.
  CHECK(b["per_draw"][2]["mean_gain_pct"].get<double>() >
        b["per_draw"][0]["mean_gain_pct"].get<double>());
  CHECK(run_place(e2_8()) == run_place(e2_8()));  // deterministic
}

TEST_CASE("a cap that costs nothing flips the decision to blind, one that costs much widens it",
          "[costmodels][power]") {
  const nlohmann::json free = nlohmann::json::parse(run_place(e2_8(flat_sweep(0))));
  CHECK(free["bands"]["aware_beats_blind"] == 0);
  for (const auto& d : free["bands"]["per_draw"]) CHECK(d["mean_gain_pct"].get<double>() <= 0);
  const nlohmann::json steep = nlohmann::json::parse(run_place(e2_8(flat_sweep(30))));
  CHECK(steep["bands"]["aware_beats_blind"] == 5);
  CHECK(steep["bands"]["per_draw"][1]["mean_gain_pct"].get<double>() >
        steep["mean_gain_pct"].get<double>());
}

TEST_CASE("place --bands says unmeasured for a GPU or a cap the sweeps lack",
          "[costmodels][power]") {
  CostmodelArgs a = e2_8();
  a.caps = {450, 575};
  nlohmann::json b = nlohmann::json::parse(run_place(a))["bands"];
  CHECK(b["status"] == "unmeasured");
  CHECK_THAT(b["why"].get<std::string>(), Contains("400 and 575 W, not 450 W"));
  a = e2_8();
  a.gpu = "h100-sxm";
  a.caps = {500, 700};
  a.json = false;
  CHECK_THAT(run_place(a), Contains("bands: unmeasured: no measured cap sweep of h100-sxm"));
}

TEST_CASE("a bad cap sweep file is named at file:line:col", "[costmodels][power]") {
  const std::string head = "rtx-5090:\n  gemm: {k: 4096, n: 6144}\n  caps_w: [400, 575]\n";
  const std::string order = write("servesim_sweep_order.yaml",
                                  head +
                                      "  points:\n    - {tokens: 1024, penalty_pct: [1, 1]}\n"
                                      "    - {tokens: 64, penalty_pct: [1, 1]}\n");
  CHECK_THROWS_WITH(load_cap_sweeps(order),
                    Contains("servesim_sweep_order.yaml:6:") && Contains("ascending"));
  const std::string range = write("servesim_sweep_range.yaml",
                                  head + "  points:\n    - {tokens: 64, penalty_pct: [5, 1]}\n");
  CHECK_THROWS_WITH(load_cap_sweeps(range),
                    Contains("servesim_sweep_range.yaml:5:") && Contains("low ≤ high"));
  const std::string key = write("servesim_sweep_key.yaml", head + "  point: []\n");
  CHECK_THROWS_WITH(load_cap_sweeps(key),
                    Contains("servesim_sweep_key.yaml:") && Contains("point"));
  const std::string caps = write("servesim_sweep_caps.yaml",
                                 "rtx-5090:\n  gemm: {k: 4096, n: 6144}\n  caps_w: [575, 400]\n"
                                 "  points:\n    - {tokens: 64, penalty_pct: [1, 1]}\n");
  CHECK_THROWS_WITH(load_cap_sweeps(caps),
                    Contains("servesim_sweep_caps.yaml:3:") && Contains("low cap < high cap"));
}
