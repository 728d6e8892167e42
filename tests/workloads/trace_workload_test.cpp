#include "workloads/trace_workload.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "tests/workloads/test_support.hpp"
#include "workloads/registry.hpp"

using namespace servesim;
using servesim::test::data_file;
using servesim::test::drain;
using servesim::test::fixture;
using servesim::test::make;
using servesim::test::trace_yaml;

namespace {

void check_request(const RequestSpec& r, SimTime arrival, std::int32_t prompt,
                   std::int32_t output) {
  CHECK(r.arrival == arrival);
  CHECK(r.prompt_tokens == prompt);
  CHECK(r.output_tokens == output);
  CHECK(r.prefix_group == -1);
}

}  // namespace

TEST_CASE("a Vidur trace is replayed row by row with exact arrival times", "[workloads][trace]") {
  auto w = make(trace_yaml("vidur", fixture("small_vidur_format.csv")));
  CHECK(w->name() == "trace");
  const auto r = drain(*w);
  REQUIRE(r.size() == 5);
  check_request(r[0], 0, 100, 10);
  check_request(r[1], 500'000'000, 200, 20);
  check_request(r[4], 4'000'000'000, 500, 50);
  CHECK_FALSE(w->next().has_value());
}

TEST_CASE("Azure arrivals are relative to the first row, across midnight", "[workloads][trace]") {
  auto w = make(trace_yaml("azure", fixture("azure_small.csv")));
  const auto r = drain(*w);
  REQUIRE(r.size() == 3);
  check_request(r[0], 0, 10, 1);
  check_request(r[1], 200, 20, 2);
  check_request(r[2], 1'500'000'100, 30, 1);  // 0 generated tokens raised to 1
  const WorkloadCounts c = workload_counts(*w);
  CHECK(c.zero_output_rows == 1);
  CHECK(c.zero_prompt_rows == 0);
  CHECK(c.yielded == 3);
}

TEST_CASE("measured rows with zero tokens are kept, raised to 1 and counted",
          "[workloads][trace]") {
  auto w = make(trace_yaml("measured", fixture("measured_small.csv")));
  const auto r = drain(*w);
  REQUIRE(r.size() == 4);
  check_request(r[0], 0, 591, 140);
  check_request(r[1], 53'490'000, 589, 1);
  check_request(r[2], 100'000'000, 1, 1);  // a failed request: has_error = 1, 0 / 0 tokens
  check_request(r[3], 200'000'000, 600, 50);
  const WorkloadCounts c = workload_counts(*w);
  CHECK(c.zero_prompt_rows == 1);
  CHECK(c.zero_output_rows == 2);
  CHECK(c.error_rows == 1);
}

TEST_CASE("num_requests replays the first rows and duration_s stops at the first late arrival",
          "[workloads][trace]") {
  auto first3 =
      make(trace_yaml("vidur", fixture("small_vidur_format.csv"), "", "  num_requests: 3\n"));
  CHECK(drain(*first3).size() == 3);
  // Arrivals 0, 0.5, 1.5, 2.0, 4.0 s; the end is exclusive, as Vidur's duration.
  auto until2 =
      make(trace_yaml("vidur", fixture("small_vidur_format.csv"), "", "  duration_s: 2.0\n"));
  const auto r = drain(*until2);
  REQUIRE(r.size() == 3);
  CHECK(r.back().arrival == 1'500'000'000);
}

TEST_CASE("start_s shifts every arrival of a trace", "[workloads][trace]") {
  auto w = make(trace_yaml("vidur", fixture("small_vidur_format.csv"), "",
                           "  start_s: 10\n  duration_s: 2.0\n"));
  const auto r = drain(*w);
  REQUIRE(r.size() == 3);
  CHECK(r[0].arrival == 10'000'000'000);
  CHECK(r[2].arrival == 11'500'000'000);
}

TEST_CASE("time_scale multiplies arrival times", "[workloads][trace]") {
  auto w = make(trace_yaml("vidur", fixture("small_vidur_format.csv"), ", time_scale: 2.5"));
  const auto r = drain(*w);
  REQUIRE(r.size() == 5);
  CHECK(r[1].arrival == 1'250'000'000);
  CHECK(r[4].arrival == 10'000'000'000);
}

TEST_CASE("qps rescales a trace to the requested mean rate", "[workloads][trace]") {
  // 5 rows over 4 s: 1 request/s in the file.
  auto w = make(trace_yaml("vidur", fixture("small_vidur_format.csv"), ", qps: 8"));
  const auto* t = dynamic_cast<const TraceWorkload*>(w.get());
  REQUIRE(t != nullptr);
  CHECK(t->rows() == 5);
  CHECK(t->file_qps() == Approx(1.0));
  const auto r = drain(*w);
  REQUIRE(r.size() == 5);
  CHECK(r[1].arrival == 62'500'000);   // 0.5 s / 8
  CHECK(r[4].arrival == 500'000'000);  // 4 s / 8: mean gap 1/8 s exactly
}

TEST_CASE("relative trace paths resolve against the config file's folder", "[workloads][trace]") {
  const ConfigNode root = ConfigNode::parse(
      "workload:\n  trace: {format: vidur, file: small_vidur_format.csv}\n", fixture("run.yaml"));
  auto w = make_workload(root.at("workload"), 1);
  CHECK(drain(*w).size() == 5);
}

TEST_CASE("the shipped Vidur, Azure and measured traces start with the rows in the files",
          "[workloads][trace][data]") {
  const std::string vidur = data_file("vidur/processed_traces/splitwise_conv.csv");
  const std::string azure = data_file("azure/AzureLLMInferenceTrace_conv.csv");
  const std::string measured =
      data_file("sim2real/traces/20260217-155451-llama-2-7b-tp1-codegen.csv");
  // splitwise_conv.csv: 0.0,374,44 / 4.314579,396,109 / 4.541877,879,55
  auto v = make(trace_yaml("vidur", vidur, "", "  num_requests: 3\n"));
  auto rv = drain(*v);
  REQUIRE(rv.size() == 3);
  check_request(rv[0], 0, 374, 44);
  check_request(rv[1], 4'314'579'000, 396, 109);
  check_request(rv[2], 4'541'877'000, 879, 55);
  // Azure conv: 18:15:46.6805900,374,44 / 18:15:50.9951690,396,109 / 18:15:51.2224670,879,55
  auto a = make(trace_yaml("azure", azure, "", "  num_requests: 3\n"));
  auto ra = drain(*a);
  REQUIRE(ra.size() == 3);
  check_request(ra[0], 0, 374, 44);
  check_request(ra[1], 4'314'579'000, 396, 109);
  check_request(ra[2], 4'541'877'000, 879, 55);
  // codegen run: 0,0.000000,591,140,… / 1,0.053490,589,48,…
  auto m = make(trace_yaml("measured", measured, "", "  num_requests: 2\n"));
  auto rm = drain(*m);
  REQUIRE(rm.size() == 2);
  check_request(rm[0], 0, 591, 140);
  check_request(rm[1], 53'490'000, 589, 48);
}

TEST_CASE("the splitwise CSVs replay the Azure traces they were converted from, to the ns",
          "[workloads][trace][data]") {
  for (const std::string name : {"conv", "code"}) {
    const std::string vidur = data_file("vidur/processed_traces/splitwise_" + name + ".csv");
    const std::string azure = data_file("azure/AzureLLMInferenceTrace_" + name + ".csv");
    auto v = make(trace_yaml("vidur", vidur));
    auto a = make(trace_yaml("azure", azure));
    std::int64_t n = 0;
    std::int64_t mismatches = 0;
    for (;;) {
      const auto rv = v->next();
      const auto ra = a->next();
      REQUIRE(rv.has_value() == ra.has_value());
      if (!rv) break;
      ++n;
      if (rv->arrival != ra->arrival || rv->prompt_tokens != ra->prompt_tokens ||
          rv->output_tokens != ra->output_tokens) {
        ++mismatches;
      }
    }
    CHECK(n == (name == "conv" ? 19'366 : 8'819));
    CHECK(mismatches == 0);
  }
}

TEST_CASE("qps rescaling of a shipped trace gives the requested mean rate",
          "[workloads][trace][data]") {
  const std::string azure = data_file("azure/AzureLLMInferenceTrace_code.csv");
  auto w = make(trace_yaml("azure", azure, ", qps: 8"));
  const auto r = drain(*w);
  REQUIRE(r.size() == 8'819);
  const double rate = static_cast<double>(r.size() - 1) / sim_to_s(r.back().arrival - r[0].arrival);
  CHECK(rate == Approx(8.0).epsilon(1e-9));
  for (std::size_t i = 1; i < r.size(); ++i) REQUIRE(r[i].arrival >= r[i - 1].arrival);
}

TEST_CASE("the shipped measured traces replay with their zero-token rows counted",
          "[workloads][trace][data]") {
  struct Expected {
    const char* file;
    std::int64_t rows, zero_prompt, zero_output, errors;
  };
  // Counted independently with Python's csv module.
  const Expected kRuns[] = {
      {"20260217-155451-llama-2-7b-tp1-codegen.csv", 9'000, 0, 26, 0},
      {"20260217-170634-llama-2-7b-tp1-reasoning.csv", 4'800, 4'068, 4'070, 4'068},
      {"20260218-150304-codellama-34b-tp2-general.csv", 16'800, 0, 0, 0},
  };
  for (const auto& e : kRuns) {
    const std::string file = data_file(std::string("sim2real/traces/") + e.file);
    INFO(e.file);
    auto w = make(trace_yaml("measured", file));
    std::int64_t n = 0;
    while (w->next()) ++n;
    const WorkloadCounts c = workload_counts(*w);
    CHECK(n == e.rows);
    CHECK(c.zero_prompt_rows == e.zero_prompt);
    CHECK(c.zero_output_rows == e.zero_output);
    CHECK(c.error_rows == e.errors);
  }
}

TEST_CASE("a trace's slo_class column names each request's SLO class", "[workloads][trace]") {
  auto w = make(trace_yaml("vidur", fixture("slo_class_vidur.csv")));
  w->set_slo_classes({"batch", "interactive"});
  const auto r = drain(*w);
  REQUIRE(r.size() == 3);
  CHECK(r[0].slo_class == 1);
  CHECK(r[1].slo_class == -1);  // an empty field: the engine classifies it
  CHECK(r[2].slo_class == 0);
  // A name the config does not declare is an error at its line and column.
  auto bad = make(trace_yaml("vidur", fixture("slo_class_unknown.csv")));
  bad->set_slo_classes({"batch", "interactive"});
  CHECK(bad->next()->slo_class == 0);
  CHECK_THROWS_WITH(bad->next(), Catch::Contains("slo_class_unknown.csv:3:") &&
                                     Catch::Contains("urgent") &&
                                     Catch::Contains("batch, interactive"));
  auto none = make(trace_yaml("vidur", fixture("slo_class_vidur.csv")));
  none->set_slo_classes({});
  CHECK_THROWS_WITH(none->next(), Catch::Contains("names no classes"));
}
