#include "tools/sweep/selection.hpp"

#include <cmath>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using namespace servesim;
using namespace servesim::sweep;

namespace {
const double kNaN = std::nan("");
// A hand-made table: budget, throughput, TBT p99, attainment.
const std::vector<std::string> kColumns = {"budget", "output_tok_s", "tbt_p99_ms", "attainment"};
PointTable table() {
  return PointTable(kColumns, {
                                  {256, 100, 20, 1.0},    // 0
                                  {512, 150, 35, 1.0},    // 1
                                  {1024, 180, 48, 0.98},  // 2
                                  {2048, 180, 70, 0.99},  // 3: ties 2 on throughput
                                  {4096, 200, 95, 0.90},  // 4
                                  {8192, kNaN, 99, 1.0},  // 5: no throughput (never chosen)
                              });
}
std::vector<nlohmann::json> values() {
  std::vector<nlohmann::json> v;
  for (int p = 0; p < 6; ++p) v.push_back({{"budget", 256 << p}});
  return v;
}
}  // namespace

TEST_CASE("SLO bounds parse as upper or lower bounds and value lists of known columns",
          "[sweep][selection]") {
  const SloBound a = parse_slo("tbt_p99_ms=25,30,50", kColumns);
  CHECK(a.metric == "tbt_p99_ms");
  CHECK_FALSE(a.at_least);
  CHECK(a.values == std::vector<double>{25, 30, 50});
  CHECK_FALSE(parse_slo("tbt_p99_ms<=40", kColumns).at_least);
  const SloBound b = parse_slo("attainment>=0.99", kColumns);
  CHECK(b.at_least);
  CHECK(b.values == std::vector<double>{0.99});
  CHECK_THROWS_WITH(parse_slo("tbt_p999_ms=5", kColumns),
                    Catch::Contains("unknown metric 'tbt_p999_ms'") &&
                        Catch::Contains("known: budget, output_tok_s"));
  CHECK_THROWS_WITH(parse_slo("tbt_p99_ms=fast", kColumns),
                    Catch::Contains("'fast' is not a number"));
  CHECK_THROWS_WITH(parse_slo("tbt_p99_ms", kColumns), Catch::Contains("expected METRIC=BOUND"));
  CHECK(parse_pick("min:tbt_p99_ms", kColumns).maximize == false);
  CHECK_THROWS_WITH(parse_pick("best:budget", kColumns), Catch::Contains("expected max:NAME"));
  CHECK_THROWS_WITH(parse_pick("max:speed", kColumns),
                    Catch::Contains("unknown metric or varied key"));
}

TEST_CASE("the pick is the best point meeting every bound and ties go to the earlier point",
          "[sweep][selection]") {
  const PointTable t = table();
  // Throughput 180 at points 2 and 3: the earlier one wins, the other is the runner-up.
  Choice c = choose(t, {{2, false, 80}}, 1, true);
  CHECK(c.best == std::optional<std::size_t>(2));
  CHECK(c.runner_up == std::optional<std::size_t>(3));
  CHECK_FALSE(c.closest);
  // Two bounds: attainment >= 0.99 removes point 2, TBT <= 80 removes 4 and 5.
  c = choose(t, {{2, false, 80}, {3, true, 0.99}}, 1, true);
  CHECK(c.best == std::optional<std::size_t>(3));
  CHECK(c.runner_up == std::optional<std::size_t>(1));
  // The largest budget within TBT 100: point 5 has no throughput but the objective is the budget.
  CHECK(choose(t, {{2, false, 100}}, 0, true).best == std::optional<std::size_t>(5));
  // A point with a NaN objective is never chosen.
  CHECK(choose(t, {{2, false, 100}}, 1, true).best == std::optional<std::size_t>(4));
  // min: the least TBT.
  CHECK(choose(t, {}, 2, false).best == std::optional<std::size_t>(0));
}

TEST_CASE("with no feasible point there is no pick and the closest point is named",
          "[sweep][selection]") {
  const PointTable t = table();
  const Choice c = choose(t, {{2, false, 10}}, 1, true);
  CHECK_FALSE(c.best);
  CHECK_FALSE(c.runner_up);
  CHECK(c.closest == std::optional<std::size_t>(0));  // TBT 20 against 10: least broken
  CHECK(slack(t, 0, {2, false, 10}) == Approx(-1.0));
  CHECK(slack(t, 1, {2, false, 50}) == Approx(0.3));
  CHECK(slack(t, 2, {3, true, 0.98}) == Approx(0.0));
  CHECK(meets(t, 2, {{3, true, 0.98}}));  // on the bound meets it
}

TEST_CASE("a study scores each SLO value's pick on the oracle with baselines and Spearman",
          "[sweep][selection]") {
  const PointTable model = table();
  // The oracle: the same points slower, and point 2 above 50 ms.
  const PointTable oracle(kColumns, {
                                        {256, 95, 22, 1.0},
                                        {512, 140, 38, 1.0},
                                        {1024, 170, 52, 1.0},
                                        {2048, 175, 75, 1.0},
                                        {4096, 190, 99, 1.0},
                                        {8192, 191, 120, 1.0},
                                    });
  SelectionSpec spec;
  spec.slos = {parse_slo("tbt_p99_ms=10,50,100", kColumns)};
  spec.objective = parse_pick("max:budget", kColumns);
  spec.throughput = "output_tok_s";
  spec.baselines = {{"budget=512", 1}};
  const auto s = select_study(spec, model, &oracle, values());
  const auto& set = s["settings"];
  REQUIRE(set.size() == 3);
  CHECK(set[0]["pick"].is_null());  // 10 ms: nothing, on either
  CHECK(set[0]["oracle"]["same_pick"] == true);
  CHECK(set[1]["pick"]["point"] == 2);  // 48 <= 50 on the model, 52 on the oracle
  CHECK(set[1]["oracle"]["pick"]["point"] == 1);
  CHECK(set[1]["oracle"]["pick_honoured"] == false);
  CHECK(set[1]["oracle"]["throughput_fraction"].get<double>() == Approx(170.0 / 140));
  CHECK(set[2]["pick"]["point"] == 5);  // budget 8192: 99 <= 100 on the model, 120 on the oracle
  CHECK(set[2]["oracle"]["pick"]["point"] == 4);
  CHECK(set[1]["baselines"][0]["oracle"]["meets"] == true);
  CHECK(set[1]["baselines"][0]["oracle"]["throughput_fraction"].get<double>() == Approx(1.0));
  CHECK(set[1]["pick"]["bounds"][0]["slack"].get<double>() == Approx(0.04));
  const auto& sum = s["summary"];
  CHECK(sum["picked"] == 2);
  CHECK(sum["same_pick_as_oracle"] == 1);
  CHECK(sum["pick_honour_rate"].get<double>() == Approx(0.0));  // both picks break on the oracle
  CHECK(sum["baselines"][0]["honour_rate"].get<double>() == Approx(2.0 / 3));
  CHECK(sum["spearman"]["tbt_p99_ms"].get<double>() == Approx(1.0));
  CHECK_FALSE(format_selection(s).empty());
}

TEST_CASE("only one --slo may list values", "[sweep][selection]") {
  SelectionSpec spec;
  spec.slos = {parse_slo("tbt_p99_ms=10,50", kColumns),
               parse_slo("attainment>=0.9,0.99", kColumns)};
  spec.objective = parse_pick("max:budget", kColumns);
  CHECK_THROWS_WITH(select_study(spec, table(), nullptr, values()),
                    Catch::Contains("at most one list"));
}
