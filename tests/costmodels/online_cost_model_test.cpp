#include "costmodels/online/online_cost_model.hpp"

#include <cmath>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using namespace servesim;

namespace online_test {

// Every step 5 ms, of which 1 ms host; a request overhead of 2 ms.
class FiveMs final : public CostModel {
 public:
  std::string_view name() const override { return "five"; }
  StepCost step(const BatchShape&, const ReplicaSpec&) const override {
    StepCost c;
    c.total_ns = 5'000'000;
    c[CostComponent::kHost] = 1'000'000;
    return c;
  }
  SimTime request_overhead_ns() const override { return 2'000'000; }
};

// One request of 11 tokens as the online model would simulate it alone: TTFT one step, then ten
// decode steps, each at the model's current step price (no overhead).
OnlineCostModel::Observation simulated(const OnlineCostModel& m, std::int64_t id,
                                       double measured_itl_ns, double measured_ttft_ns) {
  const double step = static_cast<double>(m.step(BatchShape{}, ReplicaSpec{}).total_ns);
  return {id, measured_ttft_ns, measured_ttft_ns + 10 * measured_itl_ns, step, 11 * step, 11};
}

}  // namespace online_test

using online_test::FiveMs;
using online_test::simulated;

TEST_CASE("the online learner converges on a known floor and overhead as an EWMA does",
          "[costmodels][online]") {
  const FiveMs base;
  OnlineCostModel::Options o;
  o.alpha = 0.1;
  o.mode = OnlineCostModel::Mode::kPeeking;
  o.learn = OnlineCostModel::Learn::kFloor;
  OnlineCostModel m(base, o);
  // Measured: steps 2 ms slower than priced (a 3 ms host floor), TTFT = one 7 ms step + 4 ms
  // overhead. After k observations the step offset is 2 ms · (1 − 0.9^k).
  for (int k = 1; k <= 20; ++k) REQUIRE(m.observe(simulated(m, k, 7e6, 11e6)));
  CHECK(m.step_offset_ns() == Approx(2e6 * (1 - std::pow(0.9, 20))).margin(1));
  for (int k = 21; k <= 300; ++k) m.observe(simulated(m, k, 7e6, 11e6));
  CHECK(m.step_offset_ns() == Approx(2e6).epsilon(1e-6));
  CHECK(m.step(BatchShape{}, ReplicaSpec{}).total_ns == 7'000'000);
  CHECK(m.step(BatchShape{}, ReplicaSpec{})[CostComponent::kHost] == Approx(3e6));
  // TTFT 11 ms measured, one 7 ms step simulated: the overhead settles at 4 ms (base 2 + 2).
  CHECK(m.request_overhead_ns() == Approx(4e6).epsilon(1e-4));
  CHECK(m.observations() == 300);
  CHECK(m.history().size() == 300);
}

TEST_CASE("the online learner converges on a known step scale as an EWMA does",
          "[costmodels][online]") {
  const FiveMs base;
  OnlineCostModel::Options o;  // learns a scale by default
  o.alpha = 0.1;
  o.mode = OnlineCostModel::Mode::kPeeking;
  OnlineCostModel m(base, o);
  // Measured steps of 6 ms against 5 ms priced: scale ×= 1 + 0.1 (6 / (5 scale) − 1), i.e.
  // scale = 0.9 scale + 0.1 · 1.2, so after k observations scale = 1.2 − 0.2 · 0.9^k.
  for (int k = 1; k <= 20; ++k) REQUIRE(m.observe(simulated(m, k, 6e6, 7e6)));
  // (The simulated step is priced in whole nanoseconds.)
  CHECK(m.step_scale() == Approx(1.2 - 0.2 * std::pow(0.9, 20)).epsilon(1e-7));
  CHECK(m.step_offset_ns() == 0);
  for (int k = 21; k <= 300; ++k) m.observe(simulated(m, k, 6e6, 7e6));
  CHECK(m.step_scale() == Approx(1.2).epsilon(1e-6));
  const StepCost c = m.step(BatchShape{}, ReplicaSpec{});
  CHECK(c.total_ns == 6'000'000);
  CHECK(c[CostComponent::kHost] == Approx(1.2e6));  // every component scales
  CHECK(m.history().back() == m.step_scale());
  // TTFT 7 ms measured, one 6 ms step simulated: the overhead settles at 1 ms (base 2 − 1).
  CHECK(m.request_overhead_ns() == Approx(1e6).epsilon(1e-4));
  // Steps measured 4× or 0.1× the price: the scale stops at 2 and at 0.5.
  OnlineCostModel slow(base, o), fast(base, o);
  for (int k = 0; k < 200; ++k) {
    slow.observe(simulated(slow, k, 20e6, 20e6));
    fast.observe(simulated(fast, k, 0.5e6, 1e6));
  }
  CHECK(slow.step_scale() == OnlineCostModel::kMaxScale);
  CHECK(fast.step_scale() == OnlineCostModel::kMinScale);
  CHECK(fast.step(BatchShape{}, ReplicaSpec{}).total_ns == 2'500'000);
}

TEST_CASE("the frozen learner never learns from a request past its learning part",
          "[costmodels][online]") {
  const FiveMs base;
  for (const auto learn : {OnlineCostModel::Learn::kScale, OnlineCostModel::Learn::kFloor}) {
    OnlineCostModel::Options o;
    o.alpha = 0.2;
    o.learn_requests = 10;
    o.learn = learn;
    OnlineCostModel m(base, o);
    for (int id = 0; id < 10; ++id) CHECK(m.observe(simulated(m, id, 6e6, 7e6)));
    const SimTime step = m.step(BatchShape{}, ReplicaSpec{}).total_ns;
    const SimTime overhead = m.request_overhead_ns();
    CHECK(step > 5'000'000);
    // Requests 10 and on are what it predicts: observing them changes nothing.
    for (int id = 10; id < 100; ++id) CHECK_FALSE(m.observe(simulated(m, id, 50e6, 90e6)));
    CHECK(m.step(BatchShape{}, ReplicaSpec{}).total_ns == step);
    CHECK(m.request_overhead_ns() == overhead);
    CHECK(m.observations() == 10);
  }
}

TEST_CASE("the learned floor and overhead stop at zero", "[costmodels][online]") {
  const FiveMs base;
  OnlineCostModel::Options o;
  o.alpha = 0.5;
  o.mode = OnlineCostModel::Mode::kPeeking;
  o.learn = OnlineCostModel::Learn::kFloor;
  OnlineCostModel m(base, o);
  // Measured steps of 1 ms and no overhead: only the 1 ms host floor and 2 ms overhead can go.
  for (int k = 0; k < 100; ++k) m.observe(simulated(m, k, 1e6, 1e6));
  CHECK(m.step_offset_ns() == Approx(-1e6));
  CHECK(m.step(BatchShape{}, ReplicaSpec{}).total_ns == 4'000'000);
  CHECK(m.step(BatchShape{}, ReplicaSpec{})[CostComponent::kHost] == 0);
  CHECK(m.request_overhead_ns() == 0);
  CHECK(m.overhead_offset_ns() == Approx(-2e6));
  // A one-token request has no ITL: only the overhead learns from it.
  OnlineCostModel one(base, o);
  one.observe({0, 9e6, 9e6, 5e6, 5e6, 1});
  CHECK(one.step_offset_ns() == 0);
  CHECK(one.overhead_offset_ns() == Approx(0.5 * (9e6 - 5e6 - 2e6)));
  OnlineCostModel::Options bad;
  bad.alpha = 0;
  CHECK_THROWS_AS(OnlineCostModel(base, bad), InputError);
}
