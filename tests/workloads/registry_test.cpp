#include "workloads/registry.hpp"

#include <map>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "tests/workloads/test_support.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using servesim::test::drain;
using servesim::test::error_of;
using servesim::test::fixture;
using servesim::test::kFixed;
using servesim::test::make;
using servesim::test::trace_yaml;

namespace {

// A working section of every arrival kind.
std::map<std::string, std::string> arrival_sections() {
  return {
      {"diurnal", "{kind: diurnal, peak_qps: 8, trough_qps: 1, day_s: 60}"},
      {"gamma", "{kind: gamma, qps: 4, cv: 2}"},
      {"poisson", "{kind: poisson, qps: 4}"},
      {"stages", "{kind: stages, stages: [{rate: 4, duration_s: 10}, {rate: 8, duration_s: 10}]}"},
      {"static", "{kind: static, qps: 4}"},
  };
}

// A working section of every length kind.
std::map<std::string, std::string> length_sections() {
  return {
      {"conversation",
       "{kind: conversation, turns_mean: 2, prompt_tokens_mean: 300, max_prompt_tokens: 2000, "
       "output: {edges: [1, 100, 400], counts: [3, 1]}}"},
      {"fixed", kFixed},
      {"random", "{kind: random, input_len: 100, output_len: 30, range_ratio: 0.8}"},
      {"shared_prefix_chat",
       "{kind: shared_prefix_chat, num_groups: 3, users_per_group: 2, system_prompt_tokens: 10, "
       "question_tokens: 20, output_tokens: 5}"},
      {"trace", fmt::format("{{kind: trace, file: '{}'}}", fixture("lengths_small.csv"))},
      {"uniform", "{kind: uniform, min_tokens: 10, max_tokens: 20, prefill_decode_ratio: 2}"},
      {"zipf", "{kind: zipf, min_tokens: 10, max_tokens: 20, prefill_decode_ratio: 2}"},
  };
}

}  // namespace

TEST_CASE("every arrival kind and length kind in the registry builds a working workload",
          "[workloads][registry]") {
  CHECK(arrival_kinds() ==
        std::vector<std::string>{"diurnal", "gamma", "poisson", "stages", "static"});
  CHECK(length_kinds() == std::vector<std::string>{"conversation", "fixed", "random",
                                                   "shared_prefix_chat", "trace", "uniform",
                                                   "zipf"});
  const auto arrivals = arrival_sections();
  const auto lengths = length_sections();
  for (const auto& a : arrival_kinds()) {
    for (const auto& l : length_kinds()) {
      INFO(a << " × " << l);
      auto w = make(fmt::format("workload:\n  arrival: {}\n  lengths: {}\n  num_requests: 50\n",
                                arrivals.at(a), lengths.at(l)));
      const auto r = drain(*w);
      REQUIRE(r.size() == 50);
      for (std::size_t i = 0; i < r.size(); ++i) {
        REQUIRE(r[i].prompt_tokens >= 1);
        REQUIRE(r[i].output_tokens >= 1);
        if (i > 0) REQUIRE(r[i].arrival >= r[i - 1].arrival);
      }
    }
  }
  CHECK(trace_formats() == std::vector<std::string>{"azure", "measured", "mooncake", "vidur"});
  for (const auto& f : trace_formats()) {
    const std::string file = f == "vidur"      ? "small_vidur_format.csv"
                             : f == "azure"    ? "azure_small.csv"
                             : f == "mooncake" ? "mooncake_small.jsonl"
                                               : "measured_small.csv";
    INFO(f);
    CHECK(drain(*make(trace_yaml(f, fixture(file)))).size() >= 3);
  }
}

TEST_CASE("a missing column names the file, line 1 and the expected columns",
          "[workloads][bad-input]") {
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("missing_column.csv"))),
             Contains("missing_column.csv:1: missing column 'num_decode_tokens' (expected "
                      "columns: arrived_at, num_prefill_tokens, num_decode_tokens)"));
  // A Vidur trace is not an Azure trace.
  CHECK_THAT(error_of(trace_yaml("azure", fixture("small_vidur_format.csv"))),
             Contains("small_vidur_format.csv:1: missing column 'TIMESTAMP'"));
}

TEST_CASE("an arrival earlier than the previous row is an error at its line",
          "[workloads][bad-input]") {
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("unsorted.csv"))),
             Contains("unsorted.csv:5: column 'arrived_at': '1.5' is earlier than the previous "
                      "row (expected rows sorted by arrival)"));
}

TEST_CASE("a trace with a header and no rows is an error, not an empty run",
          "[workloads][bad-input]") {
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("header_only.csv"))),
             Contains("header_only.csv:1: no usable rows (expected at least one request row "
                      "after the header)"));
}

TEST_CASE("a NaN timestamp is an error at its line", "[workloads][bad-input]") {
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("nan_time.csv"))),
             Contains("nan_time.csv:3: column 'arrived_at': expected a time in seconds ≥ 0, got "
                      "'nan'"));
  CHECK_THAT(error_of(trace_yaml("azure", fixture("azure_bad_timestamp.csv"))),
             Contains("azure_bad_timestamp.csv:4: column 'TIMESTAMP': expected a date-time"));
}

TEST_CASE("bad token counts and short rows are errors at their line", "[workloads][bad-input]") {
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("non_numeric_tokens.csv"))),
             Contains("non_numeric_tokens.csv:4: column 'num_prefill_tokens': expected a whole "
                      "token count ≥ 0, got 'abc'"));
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("negative_tokens.csv"))),
             Contains("negative_tokens.csv:3: column 'num_decode_tokens': expected a whole token "
                      "count ≥ 0, got '-5'"));
  CHECK_THAT(error_of(trace_yaml("vidur", fixture("fewer_fields.csv"))),
             Contains("fewer_fields.csv:3: 2 fields (expected 3 as in the header)"));
}

TEST_CASE("bad trace rows fail when the workload is made, before simulated time 0",
          "[workloads][bad-input]") {
  CHECK_THROWS_AS(make(trace_yaml("vidur", fixture("unsorted.csv"))), InputError);
}

TEST_CASE("bad config values name the key and what was expected", "[workloads][bad-input]") {
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: -2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("test.yaml:2:33: workload.arrival.qps: expected a positive number"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: gamma, qps: 2, cv: 0}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("workload.arrival.cv: expected a positive number"));
  CHECK_THAT(
      error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: zipf, "
               "min_tokens: 10, max_tokens: 5, prefill_decode_ratio: 1}\n  num_requests: 5\n"),
      Contains("workload.lengths.max_tokens: 5 is below min_tokens 10"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: zipf, "
                      "min_tokens: 1, max_tokens: 5, theta: 1, prefill_decode_ratio: 1}\n  "
                      "num_requests: 5\n"),
             Contains("workload.lengths.theta: expected a number in [0, 1), got 1"));
  CHECK_THAT(error_of("workload:\n  trace: {format: vidur, file: 'x.csv', qps: 0}\n"),
             Contains("workload.trace.qps: expected a positive number"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n  max_tokens: 1\n"),
             Contains("workload.max_tokens: 1 is too small"));
  // Simulated time has a horizon (1e9 s): inputs that would pass it are errors, not wrapped
  // int64 nanoseconds.
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 1.0e-10}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("workload.arrival.qps: 5 requests at this rate span about 5e+10 s; a run "
                      "must stay well inside the simulated-time horizon"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n  start_s: 9.3e9\n"),
             Contains("workload.start_s: 9300000000 s is past the simulated-time horizon"));
  // A shared prefix plus a question longer than a 32-bit token count is refused, not wrapped
  // into a negative prompt.
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: "
                      "shared_prefix_chat, num_groups: 1, users_per_group: 1, "
                      "system_prompt_tokens: 1000000000, question_tokens: 1200000000, "
                      "output_tokens: 5}\n  num_requests: 5\n"),
             Contains("workload.lengths.question_tokens: system_prompt_tokens + question_tokens = "
                      "2200000000 is more than a prompt can have"));
}

TEST_CASE("unknown kinds and formats list the known values", "[workloads][bad-input]") {
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poison, qps: 2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("test.yaml:2:19: workload.arrival.kind: unknown arrival kind 'poison' "
                      "(did you mean 'poisson'? known: diurnal, gamma, poisson, stages, static)"));
  CHECK_THAT(
      error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: zip}\n  "
               "num_requests: 5\n"),
      Contains("unknown lengths kind 'zip' (did you mean 'zipf'? known: conversation, fixed, "
               "random, shared_prefix_chat, trace, uniform, zipf)"));
  CHECK_THAT(error_of("workload:\n  trace: {format: sharegpt, file: x.csv}\n"),
             Contains("unknown trace format 'sharegpt' (known: azure, measured, mooncake, vidur)"));
}

TEST_CASE("unknown keys are errors listing the known keys", "[workloads][bad-input]") {
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qsp: 2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("unknown key 'qsp' in workload.arrival (did you mean 'qps'? known: kind, "
                      "qps)"));
  // cv belongs to gamma only.
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2, cv: 2}\n  lengths: " + kFixed +
                      "\n  num_requests: 5\n"),
             Contains("unknown key 'cv'"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: " + kFixed +
                      "\n  num_request: 5\n"),
             Contains("unknown key 'num_request' in workload"));
}

TEST_CASE("workloads that cannot be built say what is missing", "[workloads][bad-input]") {
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: " + kFixed + "\n"),
             Contains("workload: a synthetic workload never ends on its own (expected "
                      "num_requests, duration_s or both)"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  num_requests: 5\n"),
             Contains("expected either 'trace', or both 'arrival' and 'lengths'"));
  CHECK_THAT(error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}'}}\n  arrival: "
                                  "{{kind: poisson, qps: 2}}\n",
                                  fixture("small_vidur_format.csv"))),
             Contains("workload.arrival: cannot be combined with 'trace'"));
  CHECK_THAT(error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}', qps: 2, "
                                  "time_scale: 2}}\n",
                                  fixture("small_vidur_format.csv"))),
             Contains("give qps or time_scale, not both"));
  CHECK_THAT(error_of("workload:\n  trace: {format: vidur, file: no_such_file.csv}\n"),
             Contains("test.yaml:2:32: workload.trace.file: 'no_such_file.csv', "
                      "which resolves to '") &&
                 Contains("expected a readable CSV file)"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: trace, "
                      "file: '" +
                      fixture("lengths_all_failed.csv") + "'}\n  num_requests: 5\n"),
             Contains("lengths_all_failed.csv:2: no usable rows: all 2 rows have has_error = 1, "
                      "the first here (expected at least one row with has_error = 0)"));
  CHECK_THAT(error_of("workload:\n  arrival: {kind: poisson, qps: 2}\n  lengths: {kind: trace, "
                      "file: '" +
                      fixture("lengths_half_pair.csv") + "'}\n  num_requests: 5\n"),
             Contains("lengths_half_pair.csv:1: column 'num_prefill_tokens' without "
                      "'num_decode_tokens' (expected both length columns)"));
  CHECK_THAT(error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}', qps: 2}}\n  "
                                  "num_requests: 1\n",
                                  fixture("small_vidur_format.csv"))),
             Contains("test.yaml:2:") &&
                 Contains("cannot rescale to qps 2: the 1 replayed rows span 0 s"));
  // A rescale value the trace cannot take is an error at the key (found by fuzz_config: the
  // message named only the trace).
  CHECK_THAT(
      error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}', qps: 2.7e70}}\n",
                           fixture("small_vidur_format.csv"))),
      Contains("test.yaml:2:") && Contains("qps 2.7e+70 is too high for this trace") &&
          Contains("small_vidur_format.csv)"));
  CHECK_THAT(
      error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}', "
                           "time_scale: 1e-12}}\n",
                           fixture("small_vidur_format.csv"))),
      Contains("test.yaml:2:") && Contains("time_scale 1e-12 is too small (expected ≥ 1e-9)"));
  CHECK_THAT(error_of(fmt::format("workload:\n  trace: {{format: vidur, file: '{}', "
                                  "time_scale: 1e300}}\n",
                                  fixture("small_vidur_format.csv"))),
             Contains("test.yaml:2:") && Contains("past the simulated-time horizon"));
}

TEST_CASE("every arrival and length entry does what its capabilities declare",
          "[workloads][registry][contract]") {
  const auto arrivals = arrival_sections();
  const auto lengths = length_sections();
  for (const ArrivalEntry& entry : arrival_entries()) {
    const std::string kind(entry.kind);
    INFO("arrival " << kind);
    REQUIRE(arrivals.count(kind) == 1);
    const std::string yaml =
        fmt::format("workload:\n  arrival: {}\n  lengths: {}\n", arrivals.at(kind), kFixed);
    if (entry.capabilities.ends_on_its_own) {
      CHECK(!drain(*make(yaml)).empty());
    } else {
      CHECK_THAT(error_of(yaml), Contains("never ends on its own"));
    }
  }
  for (const LengthEntry& entry : length_entries()) {
    const std::string kind(entry.kind);
    INFO("lengths " << kind);
    REQUIRE(lengths.count(kind) == 1);
    const std::string yaml = fmt::format(
        "workload:\n  arrival: {{kind: poisson, qps: 4}}\n  lengths: {}\n  num_requests: 5\n"
        "  shared_prefix: {{num_groups: 2, prefix_tokens: 4}}\n",
        lengths.at(kind));
    if (entry.capabilities.brings_own_prefixes) {
      CHECK_THAT(error_of(yaml), Contains("cannot be combined with"));
    } else {
      CHECK(drain(*make(yaml)).size() == 5);
    }
    if (entry.capabilities.reads_file) {
      CHECK_THAT(error_of(fmt::format("workload:\n  arrival: {{kind: poisson, qps: 4}}\n  lengths: "
                                      "{{kind: {}, file: no_such_file.csv}}\n  num_requests: 5\n",
                                      kind)),
                 Contains("no_such_file.csv"));
    }
  }
}
