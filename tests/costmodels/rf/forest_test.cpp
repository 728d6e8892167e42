#include "costmodels/rf/forest.hpp"

#include <cmath>

#include <catch2/catch.hpp>

#include "costmodels/rf/step_function.hpp"

using namespace servesim;

namespace {

// y = 50 + 0.02·x with a kink at 300 (a kernel switch), x = 1..600.
void curve(std::vector<float>& x, std::vector<float>& y) {
  for (int i = 1; i <= 600; i += 3) {
    x.push_back(static_cast<float>(i));
    y.push_back(static_cast<float>(50 + 0.02 * i + (i >= 300 ? 4.0 : 0.0)));
  }
}

double mape(const std::vector<float>& p, const std::vector<float>& y) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += std::abs(p[i] - y[i]) / y[i];
  return 100 * s / static_cast<double>(y.size());
}

}  // namespace

TEST_CASE("a forest in XGBoost's random-forest mode fits a curve far from 0.5 within 0.5%",
          "[costmodels][rf]") {
  std::vector<float> x, y;
  curve(x, y);
  ForestParams p;
  p.trees = 100;
  p.max_depth = 8;
  const Forest f = Forest::train(x, y, 1, p);
  // Without base_score = mean, lambda 0 and min_child_weight 0 the leaves shrink toward 0.5
  // and this error is tens of percent.
  CHECK(mape(f.predict(x), y) < 0.5);
}

TEST_CASE("a forest is reproducible for a seed and changes with it", "[costmodels][rf]") {
  std::vector<float> x, y;
  curve(x, y);
  for (float& v : y) v += static_cast<float>(std::sin(v * 7.0));  // noise the seed can sample
  ForestParams p;
  p.trees = 30;
  const std::vector<float> a = Forest::train(x, y, 1, p).predict(x);
  const std::vector<float> b = Forest::train(x, y, 1, p).predict(x);
  p.seed = 7;
  const std::vector<float> c = Forest::train(x, y, 1, p).predict(x);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("the step function written from a forest equals the forest on every integer",
          "[costmodels][rf]") {
  std::vector<float> x, y;
  curve(x, y);
  ForestParams p;
  p.trees = 60;
  p.subsample = 0.7;
  const Forest f = Forest::train(x, y, 1, p);
  const StepFunction fn = StepFunction::tabulate(f, 1, 598);
  std::vector<float> all;
  for (int i = 1; i <= 598; ++i) all.push_back(static_cast<float>(i));
  const std::vector<float> direct = f.predict(all);
  int mismatches = 0;
  for (int i = 1; i <= 598; ++i) {
    if (static_cast<float>(fn(i)) != direct[static_cast<std::size_t>(i - 1)]) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(fn.starts.size() < 598);  // far fewer intervals than integers
}

TEST_CASE("beyond the profiled range a step function grows linearly through the origin",
          "[costmodels][rf]") {
  StepFunction fn;
  fn.starts = {1, 10, 100};
  fn.values = {1.0, 2.0, 5.0};
  fn.domain_max = 200;
  CHECK(fn(0.5) == 1.0);
  CHECK(fn(9) == 1.0);
  CHECK(fn(10) == 2.0);
  CHECK(fn(200) == 5.0);
  CHECK(fn(400) == Approx(10.0));
  CHECK(std::isnan(StepFunction{}(5)));
}
