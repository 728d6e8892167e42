// simulate on a Mooncake trace with the prefix-aware router: byte-identical reruns, the fleet-wide
// prefix hit rate in summary.json, and bad router keys exiting 1 at their file:line:col.
#include <string>

#include <catch2/catch.hpp>

#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace mooncake_run {

const std::string kConfig = "tests/tools/configs/mooncake_prefix.yaml";

// Σ hit blocks / Σ looked-up blocks over the replicas of a summary.
double replica_hit_rate(const nlohmann::json& j) {
  double q = 0, hit = 0;
  for (const auto& r : j.at("replicas")) {
    q += r.at("prefix_cache").at("query_blocks").get<double>();
    hit += r.at("prefix_cache").at("hit_blocks").get<double>();
  }
  return hit / q;
}

TEST_CASE("a Mooncake run with prefix-aware routing is deterministic and reports its hit rate",
          "[mooncake][determinism]") {
  const auto a = run_ok("mooncake_a", {kConfig});
  const auto b = run_ok("mooncake_b", {kConfig});
  CHECK(read_text(a / "summary.json") == read_text(b / "summary.json"));
  CHECK(read_text(a / "requests.h5") == read_text(b / "requests.h5"));
  const auto j = read_json(a / "summary.json");
  CHECK(j.at("requests").at("finished") == 400);
  const auto& fleet = j.at("prefix_cache");
  CHECK(fleet.at("hit_rate").get<double>() == Approx(replica_hit_rate(j)));
  CHECK(fleet.at("hit_rate").get<double>() > 0.0);
  // Routing by prefix finds more of the cache than spreading requests in turn.
  const auto rr = read_json(run_ok("mooncake_rr", {kConfig, "--set", "router.kind=round_robin"}) /
                            "summary.json");
  CHECK(fleet.at("hit_rate").get<double>() > rr.at("prefix_cache").at("hit_rate").get<double>());
}

TEST_CASE("a run without hashed requests has no fleet prefix_cache block", "[mooncake]") {
  const auto dir = run_ok("mooncake_none", {"tests/tools/configs/seeded.yaml"});
  CHECK_FALSE(read_json(dir / "summary.json").contains("prefix_cache"));
}

TEST_CASE("a bad prefix_aware key makes simulate exit 1 at its file:line:col",
          "[mooncake][errors]") {
  const auto dir = fresh_dir("bad_prefix_aware");
  const auto r =
      run_simulate({"tests/tools/bad/prefix_aware_bad_weight.yaml", "--out", dir.string(), "-q"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("tests/tools/bad/prefix_aware_bad_weight.yaml:4:44"));
}

}  // namespace mooncake_run
}  // namespace servesim::test
