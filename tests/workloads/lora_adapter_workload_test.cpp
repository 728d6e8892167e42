// The adapter draw of multi-LoRA runs: deterministic for its seed, Zipf-shaped, and leaving the
// inner workload's arrivals and lengths as they are.
#include "workloads/lora_adapter_workload.hpp"

#include <memory>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/config/config_node.hpp"
#include "sim/config/input_error.hpp"
#include "tests/workloads/test_support.hpp"
#include "workloads/registry.hpp"

using namespace servesim;

namespace {

std::unique_ptr<Workload> lora_synthetic(std::uint64_t seed) {
  return make_workload(ConfigNode::parse("arrival: {kind: poisson, qps: 5}\n"
                                         "lengths: {kind: fixed, prompt_tokens: 32, "
                                         "output_tokens: 4}\n"
                                         "num_requests: 4000\n",
                                         "w.yaml"),
                       seed);
}

LoraConfig lora_config(double zipf_s, double base_fraction = 0) {
  LoraConfig c;
  c.num_adapters = 8;
  c.ranks = {16};
  c.zipf_s = zipf_s;
  c.base_fraction = base_fraction;
  return c;
}

std::vector<RequestSpec> drain_all(Workload& w) {
  std::vector<RequestSpec> out;
  while (auto s = w.next()) out.push_back(*s);
  return out;
}

std::vector<int> adapter_counts(const std::vector<RequestSpec>& specs, int adapters) {
  std::vector<int> c(static_cast<std::size_t>(adapters) + 1, 0);  // last: the base model
  for (const RequestSpec& s : specs) {
    c[s.adapter < 0 ? c.size() - 1 : static_cast<std::size_t>(s.adapter)]++;
  }
  return c;
}

}  // namespace

TEST_CASE("The adapter draw is deterministic for its seed and leaves the requests as they were",
          "[lora][workloads]") {
  LoraAdapterWorkload a(lora_synthetic(1), lora_config(1.0), 77);
  LoraAdapterWorkload b(lora_synthetic(1), lora_config(1.0), 77);
  LoraAdapterWorkload c(lora_synthetic(1), lora_config(1.0), 78);
  auto plain_w = lora_synthetic(1);
  const auto x = drain_all(a);
  const auto y = drain_all(b);
  const auto z = drain_all(c);
  const auto plain = drain_all(*plain_w);
  REQUIRE(x.size() == 4000);
  REQUIRE(plain.size() == 4000);
  bool differs = false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(x[i].adapter == y[i].adapter);
    differs = differs || x[i].adapter != z[i].adapter;
    CHECK(x[i].arrival == plain[i].arrival);
    CHECK(x[i].prompt_tokens == plain[i].prompt_tokens);
    CHECK(plain[i].adapter == -1);
  }
  CHECK(differs);
}

TEST_CASE("Adapters follow the Zipf law of zipf_s, and base_fraction goes to the base model",
          "[lora][workloads]") {
  LoraAdapterWorkload zipf(lora_synthetic(2), lora_config(1.0), 5);
  const auto c = adapter_counts(drain_all(zipf), 8);
  // P(k) = (1/(k+1)) / H_8, H_8 = 2.7179: adapter 0 about 36.8 %, adapter 7 about 4.6 %.
  CHECK(c[0] == Approx(4000 * 0.368).epsilon(0.08));
  CHECK(c[7] == Approx(4000 * 0.046).epsilon(0.25));
  for (std::size_t k = 0; k + 1 < 8; ++k) CHECK(c[k] > c[k + 1] / 2);
  CHECK(c[8] == 0);
  LoraAdapterWorkload uniform(lora_synthetic(2), lora_config(0.0, 0.25), 5);
  const auto u = adapter_counts(drain_all(uniform), 8);
  CHECK(u[8] == Approx(1000).epsilon(0.1));
  for (std::size_t k = 0; k < 8; ++k) CHECK(u[k] == Approx(375).epsilon(0.2));
}

TEST_CASE("A trace's adapter column names each request's adapter, checked against num_adapters",
          "[lora][workloads]") {
  using servesim::test::fixture;
  using servesim::test::make;
  using servesim::test::trace_yaml;
  const std::string yaml = trace_yaml("measured", fixture("measured_adapters.csv"));
  LoraConfig eight = lora_config(1.0);
  LoraAdapterWorkload named(make(yaml), eight, 5);
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(named.next()->adapter);
  CHECK(ids == std::vector<std::int32_t>{3, -1, -1, 0, 7});
  LoraConfig five = lora_config(1.0);
  five.num_adapters = 5;
  LoraAdapterWorkload small(make(yaml), five, 5);
  for (int i = 0; i < 4; ++i) small.next();
  try {
    small.next();
    FAIL("adapter 7 of 5 was accepted");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("measured_adapters.csv:6") &&
                             Catch::Contains("below lora.num_adapters (5)"));
  }
  // Without a lora_config section the column is ignored.
  auto plain = make(yaml);
  CHECK(plain->next()->adapter == -1);
}
