#include <cmath>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "tests/workloads/test_support.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_sampler.hpp"
#include "workloads/random_source.hpp"
#include "workloads/registry.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace servesim;
using servesim::test::drain;
using servesim::test::fixture;
using servesim::test::kFixed;
using servesim::test::make;

namespace {

std::string synthetic_yaml(const std::string& arrival, const std::string& lengths,
                           const std::string& extra) {
  return fmt::format("workload:\n  arrival: {}\n  lengths: {}\n{}", arrival, lengths, extra);
}

// Mean and coefficient of variation of the gaps between `n` arrivals.
std::pair<double, double> gap_stats(ArrivalProcess& p, int n) {
  double sum = 0;
  double sum_sq = 0;
  SimTime prev = 0;
  for (int i = 0; i < n; ++i) {
    const SimTime t = p.next();
    const double gap = static_cast<double>(t - prev);
    prev = t;
    sum += gap;
    sum_sq += gap * gap;
  }
  const double mean = sum / n;
  const double var = sum_sq / n - mean * mean;
  return {mean, std::sqrt(var) / mean};
}

#if defined(__GLIBC__)
// Bytes in use on the heap, counting large blocks that malloc serves with mmap (a growing
// vector soon lands there).
std::size_t heap_in_use() {
  const auto m = mallinfo2();
  return m.uordblks + m.hblkhd;
}
#endif

}  // namespace

TEST_CASE("a poisson stream of 2M requests keeps its rate and does not grow in memory",
          "[workloads][synthetic]") {
  auto w =
      make(synthetic_yaml("{kind: poisson, qps: 6.45}", kFixed, "  num_requests: 10000000\n"), 42);
  CHECK(w->name() == "synthetic");
#if defined(__GLIBC__)
  const auto heap_before = heap_in_use();
#endif
  constexpr int kPulled = 2'000'000;
  SimTime last = 0;
  SimTime prev = 0;
  bool ordered = true;
  for (int i = 0; i < kPulled; ++i) {
    const auto r = w->next();
    REQUIRE(r.has_value());
    ordered = ordered && r->arrival >= prev;
    prev = r->arrival;
    last = r->arrival;
  }
#if defined(__GLIBC__)
  const auto heap_after = heap_in_use();
  // No per-request state: the heap in use is the same after 2M requests (a few KB of slack).
  CHECK(heap_after <= heap_before + 4096);
#else
  WARN("heap check skipped: not glibc");
#endif
  CHECK(ordered);
  const double mean_gap_s = sim_to_s(last) / kPulled;
  CHECK(mean_gap_s == Approx(1.0 / 6.45).epsilon(0.01));
}

TEST_CASE("gamma arrivals have the requested coefficient of variation", "[workloads][synthetic]") {
  for (const double cv : {0.5, 2.0, 4.0}) {
    INFO("cv " << cv);
    ArrivalProcess p(GammaArrivals{10.0, cv}, 7);
    const auto [mean, got_cv] = gap_stats(p, 1'000'000);
    CHECK(mean == Approx(1e8).epsilon(0.01));
    CHECK(got_cv == Approx(cv).epsilon(0.03));
  }
}

TEST_CASE("poisson gaps are exponential: CV 1 and P(gap > mean) = 1/e", "[workloads][synthetic]") {
  ArrivalProcess p(PoissonArrivals{100.0}, 3);
  const auto [mean, cv] = gap_stats(p, 500'000);
  CHECK(mean == Approx(1e7).epsilon(0.01));
  CHECK(cv == Approx(1.0).epsilon(0.01));
  ArrivalProcess q(PoissonArrivals{100.0}, 3);
  SimTime prev = 0;
  int longer = 0;
  for (int i = 0; i < 200'000; ++i) {
    const SimTime t = q.next();
    if (t - prev > 10'000'000) ++longer;
    prev = t;
  }
  CHECK(longer / 200'000.0 == Approx(std::exp(-1.0)).epsilon(0.01));
}

TEST_CASE("static arrivals are evenly spaced without drift", "[workloads][synthetic]") {
  auto w = make(synthetic_yaml("{kind: static, qps: 3}", kFixed, "  num_requests: 300000\n"));
  const auto r = drain(*w);
  REQUIRE(r.size() == 300'000);
  CHECK(r[0].arrival == 333'333'333);
  CHECK(r[1].arrival == 666'666'667);
  CHECK(r[2].arrival == 1'000'000'000);
  CHECK(r.back().arrival == 100'000'000'000'000);  // 300000 / 3 s
}

TEST_CASE("the same seed gives the same requests and another seed different ones",
          "[workloads][synthetic]") {
  const std::string yaml =
      synthetic_yaml("{kind: gamma, qps: 5, cv: 2}",
                     "{kind: zipf, min_tokens: 16, max_tokens: 4096, theta: 0.6, "
                     "prefill_decode_ratio: 10}",
                     "  num_requests: 2000\n  shared_prefix: {num_groups: 4, prefix_tokens: 8}\n");
  auto a = make(yaml, 11);
  auto b = make(yaml, 11);
  auto c = make(yaml, 12);
  const auto ra = drain(*a);
  const auto rb = drain(*b);
  const auto rc = drain(*c);
  REQUIRE(ra.size() == 2000);
  REQUIRE(rb.size() == 2000);
  REQUIRE(rc.size() == 2000);
  int same_as_b = 0;
  int same_as_c = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    const auto eq = [&](const RequestSpec& x) {
      return ra[i].arrival == x.arrival && ra[i].prompt_tokens == x.prompt_tokens &&
             ra[i].output_tokens == x.output_tokens && ra[i].prefix_group == x.prefix_group;
    };
    same_as_b += eq(rb[i]) ? 1 : 0;
    same_as_c += eq(rc[i]) ? 1 : 0;
  }
  CHECK(same_as_b == 2000);
  CHECK(same_as_c < 20);
}

TEST_CASE("the random source gives the same numbers on every machine", "[workloads][synthetic]") {
  // std::mt19937_64 is fixed by the standard: its 10000th output from the default seed is
  // 9981545732273789042. Our transforms are plain arithmetic on it.
  std::mt19937_64 e;
  e.discard(9999);
  CHECK(e() == 9981545732273789042ULL);
  RandomSource r(5489);
  CHECK(r.bits() == 14514284786278117030ULL);  // first output for the default seed 5489
  RandomSource s(5489);
  CHECK(s.uniform01() == static_cast<double>(14514284786278117030ULL >> 11) * 0x1.0p-53);
}

TEST_CASE("uniform integers cover the range evenly", "[workloads][synthetic]") {
  RandomSource r(9);
  int counts[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 100'000; ++i) {
    const auto v = r.uniform_int(3, 7);
    REQUIRE(v >= 3);
    REQUIRE(v <= 7);
    ++counts[v - 3];
  }
  for (const int c : counts) CHECK(c == Approx(20'000).epsilon(0.03));
}

TEST_CASE("duration_s ends a synthetic workload at the first arrival past it, after start_s",
          "[workloads][synthetic]") {
  auto w =
      make(synthetic_yaml("{kind: poisson, qps: 50}", kFixed, "  duration_s: 20\n  start_s: 5\n"));
  const auto r = drain(*w);
  CHECK(r.size() == Approx(1000).margin(100));  // 50/s for 20 s; Poisson sd ≈ 32
  CHECK(r.front().arrival > 5'000'000'000);
  CHECK(r.back().arrival < 25'000'000'000);
  CHECK(r.back().arrival > 24'500'000'000);
  CHECK_FALSE(w->next().has_value());
  // Whichever limit comes first wins.
  auto both = make(
      synthetic_yaml("{kind: static, qps: 50}", kFixed, "  duration_s: 20\n  num_requests: 10\n"));
  CHECK(drain(*both).size() == 10);
}

TEST_CASE("max_tokens clips the prompt to max-1, then the output to what is left",
          "[workloads][synthetic]") {
  const auto run = [](int prompt, int output) {
    auto w = make(synthetic_yaml(
        "{kind: static, qps: 1}",
        fmt::format("{{kind: fixed, prompt_tokens: {}, output_tokens: {}}}", prompt, output),
        "  num_requests: 2\n  max_tokens: 4096\n"));
    const auto r = drain(*w);
    REQUIRE(r.size() == 2);
    return std::tuple{r[0].prompt_tokens, r[0].output_tokens, workload_counts(*w)};
  };
  const auto [p1, o1, c1] = run(5000, 1000);
  CHECK(p1 == 4095);
  CHECK(o1 == 1);
  CHECK(c1.clipped_to_max_tokens == 2);
  const auto [p2, o2, c2] = run(3000, 2000);
  CHECK(p2 == 3000);
  CHECK(o2 == 1096);
  const auto [p3, o3, c3] = run(3000, 1096);
  CHECK(p3 == 3000);
  CHECK(o3 == 1096);
  CHECK(c3.clipped_to_max_tokens == 0);
}

TEST_CASE("zipf lengths stay in range and split by the prefill:decode ratio",
          "[workloads][synthetic]") {
  LengthSampler s(ZipfLengths{1024, 4096, 0.6, 20.0}, 5);
  std::int64_t at_min = 0;
  double total_sum = 0;
  for (int i = 0; i < 100'000; ++i) {
    const auto [p, d] = s.next();
    const double total = p + d;
    REQUIRE(total >= 1023);  // both parts are truncated, as Vidur's int()
    REQUIRE(total <= 4096);
    // decode = ⌊total/21⌋, prefill = ⌊total − total/21⌋.
    REQUIRE(d >= 48);
    REQUIRE(d <= 196);
    if (p + d <= 1024) ++at_min;
    total_sum += total;
  }
  // Zipf puts far more mass at the low end than a uniform draw would (1/3073 per value).
  CHECK(at_min > 1000);
  CHECK(total_sum / 100'000 < 2560);  // below the uniform mean
}

TEST_CASE("uniform lengths cover [min, max] with the decode part rounded up",
          "[workloads][synthetic]") {
  LengthSampler s(UniformLengths{100, 200, 3.0}, 5);
  int lo = 1 << 30;
  int hi = 0;
  for (int i = 0; i < 50'000; ++i) {
    const auto [p, d] = s.next();
    const int total = p + d;
    REQUIRE(d == static_cast<int>(std::ceil(total / 4.0)));
    lo = std::min(lo, total);
    hi = std::max(hi, total);
  }
  CHECK(lo == 100);
  CHECK(hi == 200);
}

TEST_CASE("trace lengths are drawn with replacement from the file's rows",
          "[workloads][synthetic]") {
  auto w =
      make(synthetic_yaml("{kind: poisson, qps: 10}",
                          fmt::format("{{kind: trace, file: '{}'}}", fixture("lengths_small.csv")),
                          "  num_requests: 3000\n"));
  std::set<std::pair<int, int>> seen;
  for (const auto& r : drain(*w)) seen.insert({r.prompt_tokens, r.output_tokens});
  CHECK(seen == std::set<std::pair<int, int>>{{100, 7}, {200, 9}, {300, 11}});
}

TEST_CASE("a measured trace used for lengths leaves out its failed rows",
          "[workloads][synthetic]") {
  auto w =
      make(synthetic_yaml("{kind: poisson, qps: 10}",
                          fmt::format("{{kind: trace, file: '{}'}}", fixture("measured_small.csv")),
                          "  num_requests: 2000\n"));
  std::set<std::pair<int, int>> seen;
  for (const auto& r : drain(*w)) seen.insert({r.prompt_tokens, r.output_tokens});
  CHECK(seen == std::set<std::pair<int, int>>{{591, 140}, {589, 1}, {600, 50}});
  // The counters describe the pool: the failed row is left out (not replayed, not raised), and
  // one kept row had 0 output tokens.
  const WorkloadCounts c = workload_counts(*w);
  CHECK(c.error_rows == 0);
  CHECK(c.zero_prompt_rows == 0);
  CHECK(c.zero_output_rows == 1);
}

TEST_CASE("shared prefix groups are drawn evenly and never exceed the prompt",
          "[workloads][synthetic]") {
  auto w = make(synthetic_yaml("{kind: poisson, qps: 10}",
                               "{kind: uniform, min_tokens: 20, max_tokens: 400, "
                               "prefill_decode_ratio: 1}",
                               "  num_requests: 40000\n  shared_prefix: {num_groups: 4, "
                               "prefix_tokens: 150}\n"));
  int per_group[4] = {0, 0, 0, 0};
  for (const auto& r : drain(*w)) {
    REQUIRE(r.prefix_group >= 0);
    REQUIRE(r.prefix_group < 4);
    REQUIRE(r.prefix_tokens == std::min(150, r.prompt_tokens));
    ++per_group[r.prefix_group];
  }
  for (const int n : per_group) CHECK(n == Approx(10'000).epsilon(0.05));
}

TEST_CASE("vidur_zeta matches the direct sum, with setup independent of the range",
          "[workloads][synthetic]") {
  // Up to 10^5 terms it is Vidur's loop itself.
  double naive = 0;
  for (int i = 1; i < 4096; ++i) naive += 1.0 / std::pow(static_cast<double>(i), 0.6);
  CHECK(vidur_zeta(4096, 0.6) == naive);
  // Beyond, Euler–Maclaurin: within 1e-12 of a compensated direct sum of 10^6 terms.
  for (const double theta : {0.0, 0.3, 0.6, 0.99}) {
    long double sum = 0;
    for (std::int64_t i = 1; i < 1'000'000; ++i) {
      sum += 1.0L / std::pow(static_cast<long double>(i), static_cast<long double>(theta));
    }
    INFO("theta " << theta);
    CHECK(vidur_zeta(1'000'000, theta) == Approx(static_cast<double>(sum)).epsilon(1e-12));
  }
  // The widest range a config can ask for: finite, between the integral bounds of the sum.
  const double n = 2147483647.0;
  const double z = vidur_zeta(2147483647, 0.6);
  CHECK(z > (std::pow(n, 0.4) - 1) / 0.4);
  CHECK(z < 1 + (std::pow(n - 1, 0.4) - 1) / 0.4);
}

TEST_CASE("a stage's arrivals are uniform order statistics, drawn one at a time",
          "[workloads][stages]") {
  const StagedArrivals spec{{{100.0, seconds_to_sim(100.0), 10'000}}, 0};
  ArrivalProcess a(spec, 7);
  SimTime last = -1;
  int first_quarter = 0;
  double sum_s = 0;
  for (int i = 0; i < 10'000; ++i) {
    REQUIRE_FALSE(a.done());
    const SimTime t = a.next();
    if (i == 0) CHECK(t == 0);  // the first arrival opens the stage
    CHECK(t >= last);
    CHECK(t < seconds_to_sim(100.0));
    last = t;
    first_quarter += t < seconds_to_sim(25.0);
    sum_s += sim_to_s(t);
  }
  CHECK(a.done());
  // 9,999 uniforms: mean 50 s (sd 0.29 s), a quarter below 25 s (sd 0.43 points).
  CHECK(sum_s / 10'000 == Approx(50.0).margin(1.5));
  CHECK(first_quarter / 10'000.0 == Approx(0.25).margin(0.02));
  // A stage of 10^12 requests yields its first arrivals without drawing the rest.
  const StagedArrivals huge{{{1e6, seconds_to_sim(1e6), 1'000'000'000'000}}, 0};
  ArrivalProcess h(huge, 7);
  SimTime prev = -1;
  for (int i = 0; i < 1000; ++i) {
    const SimTime t = h.next();
    CHECK(t >= prev);
    prev = t;
  }
  CHECK(prev < seconds_to_sim(1.0));  // 1000 of 10^12 spread over 10^6 s: about 1 ms in
}
