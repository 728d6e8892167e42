#include "tools/costmodel/tie_rank.hpp"

#include <cmath>

#include <catch2/catch.hpp>

using namespace servesim::decide;

TEST_CASE("two predictions closer than the larger uncertainty are a tie", "[decide][rank]") {
  // 10% apart: a tie under 12% uncertainty, an order under 5%.
  CHECK(call({"a", 100, 0.05}, {"b", 110, 0.12}) == Call::kTie);
  CHECK(call({"a", 100, 0.05}, {"b", 110, 0.05}) == Call::kFirst);
  CHECK(call({"a", 110, 0.05}, {"b", 100, 0.05}) == Call::kSecond);
  // The gap is taken relative to the faster: 100 vs 112 is 12%, just outside 11.9%.
  CHECK(call({"a", 100, 0.119}, {"b", 112, 0.0}) == Call::kFirst);
  CHECK(call({"a", 100, 0.121}, {"b", 112, 0.0}) == Call::kTie);
  // Equal predictions (the same datasheet peak) are a tie at any uncertainty.
  CHECK(call({"h100", 50, 0.0}, {"h200", 50, 0.0}) == Call::kTie);
}

TEST_CASE("tiers chain GPUs that tie with the tier's fastest", "[decide][rank]") {
  const std::vector<Prediction> p = {
      {"a100", 300, 0.03}, {"h100", 105, 0.06}, {"h200", 100, 0.10}, {"l40s", 400, 0.10}};
  const auto t = tiers(p);
  REQUIRE(t.size() == 3);
  CHECK(t[0] == std::vector<std::size_t>{2, 1});  // h200 = h100 (5% < 10%)
  CHECK(t[1] == std::vector<std::size_t>{0});
  CHECK(t[2] == std::vector<std::size_t>{3});
}

TEST_CASE("scores count ties apart and never reward them", "[decide][rank]") {
  const std::vector<Prediction> p = {{"a100", 300, 0.03}, {"h100", 105, 0.06}, {"h200", 100, 0.10}};
  // Measured: h100 fastest, then h200, then a100.
  const CaseScore s = score_case(p, {310, 90, 95});
  CHECK(s.pairs.correct == 2);  // a100 slower than both
  CHECK(s.pairs.ties == 1);     // h100 vs h200: tied, although h100 measured faster
  CHECK(s.pairs.wrong == 0);
  CHECK(s.pairs.tie_aware_accuracy() == Approx(2.0 / 3));
  CHECK(s.pairs.decided_accuracy() == Approx(1.0));
  CHECK(s.top1_ties == 1);  // the first tier holds two GPUs
  CHECK(s.top1_hits == 0);
  // Decided and wrong: predicted h200 well ahead, measured behind.
  const CaseScore w = score_case({{"h100", 120, 0.05}, {"h200", 100, 0.05}}, {90, 100});
  CHECK(w.pairs.wrong == 1);
  CHECK(w.top1_misses == 1);
  CHECK(std::isnan(PairScore{}.tie_aware_accuracy()));
}
