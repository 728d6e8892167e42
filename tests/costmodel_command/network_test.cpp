#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/costmodel_command/command_test_support.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
using Catch::Matchers::Contains;

namespace {

CostmodelArgs network_args(const std::string& gpu, bool json) {
  CostmodelArgs a;
  a.gpu = gpu;
  a.json = json;
  return a;
}

}  // namespace

TEST_CASE("costmodel network without a measurement of the GPU reports its wiring and predictions",
          "[costmodels][network]") {
  // The A40 has no all_reduce.csv: its bridged pairs and PCIe alone are predicted, not scored.
  CostmodelArgs a = network_args("a40", true);
  a.profiles = testing::vidur_compute_dir();
  const auto j = nlohmann::json::parse(run_network(a));
  CHECK(j["measured"] == false);
  CHECK_THAT(j["why"].get<std::string>(), Contains("no <gpu>_dgx"));
  CHECK_THAT(j["interconnect"].get<std::string>(), Contains("nvlink_bridge"));
  REQUIRE(j["predicted"].size() == 6);  // {pairwise_nvlink, pcie} x p {2, 4, 8}
  const auto us = [&](std::size_t row, std::size_t size) {
    return j["predicted"][row]["all_reduce_us"][size]["us"].get<double>();
  };
  CHECK(j["predicted"][0]["topology"] == "pairwise_nvlink");
  CHECK(j["predicted"][3]["topology"] == "pcie");
  for (std::size_t row = 0; row < 6; ++row) {
    for (std::size_t s = 1; s < 4; ++s) CHECK(us(row, s) > us(row, s - 1));  // more bytes, longer
  }
  // A pair over the bridge beats the same pair over PCIe for the same bytes.
  CHECK(us(0, 3) < us(3, 3));
  // Without --profiles the same table; a GPU with no NVLink shows PCIe alone.
  CostmodelArgs l40s = network_args("l40s", true);
  const auto k = nlohmann::json::parse(run_network(l40s));
  CHECK(k["why"] == "no --profiles given");
  CHECK(k["predicted"].size() == 3);
  CHECK(k["predicted"][0]["topology"] == "pcie");
  CHECK_THAT(run_network(network_args("a40", false)),
             Contains("all-reduce predicted, not validated") && Contains("pairwise_nvlink"));
}

TEST_CASE("costmodel predict says when nothing of a GPU's class was measured",
          "[costmodels][predict]") {
  CostmodelArgs a = testing::predict_json("l40s", 0, 8, 500);
  a.json = false;
  CHECK_THAT(run_predict(a),
             Contains("unvalidated class: no profile of a GDDR card of this generation (ada)"));
  a.gpu = "a10g";
  CHECK_THAT(run_predict(a), Contains("its class (ampere GDDR) is checked on a40"));
  a.json = true;
  const auto j = nlohmann::json::parse(run_predict(a));
  CHECK(j["provenance"]["class_checked_on"] == nlohmann::json::array({"a40"}));
  CHECK(j["provenance"]["memory_type"] == "gddr6");
}
