// Golden end-to-end runs of `simulate` with the `fixed` cost model, whose timelines are worked
// out by hand below. Cost of one step (costmodels/fixed/fixed_cost_model.hpp):
//   t = 10 µs · prefill tokens + [any decode] · 5 ms
// Token accounting (sim/engine/request.hpp): the step that computes a request's last prompt token
// emits its first output token; each later step of one token (a decode) emits one more.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

// One requests.csv row as the test expects it (ns).
struct ExpectedRequest {
  long long id, arrival, first_scheduled, first_token, finished, prompt, output;
};

void check_requests(const CsvTable& csv, const std::vector<ExpectedRequest>& expected) {
  REQUIRE(csv.rows().size() == expected.size());
  for (const auto& e : expected) {
    // Rows are written in finishing order; find the one with this id.
    std::size_t i = 0;
    while (i < csv.rows().size() && csv.integer(i, "id") != e.id) ++i;
    INFO("request " << e.id);
    REQUIRE(i < csv.rows().size());
    CHECK(csv.integer(i, "arrival_ns") == e.arrival);
    CHECK(csv.integer(i, "first_scheduled_ns") == e.first_scheduled);
    CHECK(csv.integer(i, "first_token_ns") == e.first_token);
    CHECK(csv.integer(i, "finished_ns") == e.finished);
    CHECK(csv.integer(i, "prompt_tokens") == e.prompt);
    CHECK(csv.integer(i, "output_tokens") == e.output);
    CHECK(csv.integer(i, "preemptions") == 0);
    CHECK(csv.integer(i, "replica") == 0);
    CHECK(csv.integer(i, "rejected") == 0);
  }
}

// Checks a latency block {count, mean, p50, p90, p99, max} of summary.json. The values are
// computed from integer ns, so they match to the last few ulps.
void check_latency(const nlohmann::json& m, long long count, double mean, double p50, double p90,
                   double p99, double max) {
  CHECK(m.at("count").get<long long>() == count);
  CHECK(m.at("mean").get<double>() == Approx(mean).epsilon(1e-12));
  CHECK(m.at("p50").get<double>() == Approx(p50).epsilon(1e-12));
  CHECK(m.at("p90").get<double>() == Approx(p90).epsilon(1e-12));
  CHECK(m.at("p99").get<double>() == Approx(p99).epsilon(1e-12));
  CHECK(m.at("max").get<double>() == Approx(max).epsilon(1e-12));
}

}  // namespace

// golden_fixed.yaml: static arrivals at qps 1 (the k-th at k s: 1 s, 2 s, 3 s), 100-token prompts,
// 4 output tokens, chunk 512. Each request runs alone (it is done 16 ms after it arrives):
//   step 1  prefill 100 tokens   = 100 · 10 µs       = 1 ms  → first token at arrival + 1 ms
//   steps 2–4  one decode each   = 5 ms each          → tokens at +6, +11, +16 ms
// So per request: scheduling delay 0, TTFT 1 ms, TBT gaps 5, 5, 5 ms, TPOT (16 − 1)/3 = 5 ms,
// E2E 16 ms. Run: first arrival 1 s, last finish 3.016 s → makespan 2.016 s; 12 steps; busy
// 3 · 16 ms = 48 ms of 2016 ms = 0.0238095…; 3 requests / 2.016 s = 1.4880952… req/s; 12 output
// tokens / 2.016 s = 5.952381… tok/s; 300 prefill tokens / 2.016 s.
TEST_CASE("a fixed-cost run without overlap matches the hand-computed timeline", "[golden]") {
  const auto dir = fresh_dir("golden_fixed");
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  const long long s = 1'000'000'000, ms = 1'000'000;
  check_requests(CsvTable(dir / "requests.csv"),
                 {{0, 1 * s, 1 * s, 1 * s + 1 * ms, 1 * s + 16 * ms, 100, 4},
                  {1, 2 * s, 2 * s, 2 * s + 1 * ms, 2 * s + 16 * ms, 100, 4},
                  {2, 3 * s, 3 * s, 3 * s + 1 * ms, 3 * s + 16 * ms, 100, 4}});

  const CsvTable steps(dir / "steps.csv");
  REQUIRE(steps.rows().size() == 12);
  for (std::size_t i = 0; i < 12; ++i) {
    const long long arrival = static_cast<long long>(i / 4 + 1) * s;
    const bool prefill = i % 4 == 0;
    INFO("step " << i);
    CHECK(steps.integer(i, "start_ns") ==
          (prefill ? arrival : arrival + 1 * ms + static_cast<long long>(i % 4 - 1) * 5 * ms));
    CHECK(steps.integer(i, "duration_ns") == (prefill ? 1 * ms : 5 * ms));
    CHECK(steps.integer(i, "prefill_tokens") == (prefill ? 100 : 0));
    CHECK(steps.integer(i, "num_prefills") == (prefill ? 1 : 0));
    CHECK(steps.integer(i, "num_decodes") == (prefill ? 0 : 1));
    // 100 prompt tokens (+ up to 3 decoded) in blocks of 16: ⌈104/16⌉ = ⌈100/16⌉ = 7.
    CHECK(steps.integer(i, "kv_blocks_used") == 7);
  }

  const auto j = read_json(dir / "summary.json");
  CHECK(j["requests"]["arrived"] == 3);
  CHECK(j["requests"]["finished"] == 3);
  CHECK(j["requests"]["rejected"] == 0);
  CHECK(j["requests"]["preemptions"] == 0);
  CHECK(j["requests"]["output_tokens"] == 12);
  CHECK(j["steps"] == 12);
  CHECK(j["makespan_s"].get<double>() == Approx(2.016).epsilon(1e-12));
  CHECK(j["throughput"]["requests_per_s"].get<double>() == Approx(3 / 2.016).epsilon(1e-12));
  CHECK(j["throughput"]["output_tokens_per_s"].get<double>() == Approx(12 / 2.016).epsilon(1e-12));
  CHECK(j["throughput"]["prefill_tokens_per_s"].get<double>() ==
        Approx(300 / 2.016).epsilon(1e-12));
  check_latency(j["latency_ms"]["ttft"], 3, 1, 1, 1, 1, 1);
  check_latency(j["latency_ms"]["tbt"], 9, 5, 5, 5, 5, 5);
  check_latency(j["latency_ms"]["tpot"], 3, 5, 5, 5, 5, 5);
  check_latency(j["latency_ms"]["e2e"], 3, 16, 16, 16, 16, 16);
  check_latency(j["latency_ms"]["scheduling_delay"], 3, 0, 0, 0, 0, 0);
  CHECK(j["slo"].is_null());
  REQUIRE(j["replicas"].size() == 1);
  CHECK(j["replicas"][0]["steps"] == 12);
  CHECK(j["replicas"][0]["busy_fraction"].get<double>() == Approx(48.0 / 2016.0).epsilon(1e-12));
}

// golden_overlap.yaml replays golden_overlap_trace.csv, chunk 512 (budget 512 tokens per step):
//   R0 arrives at 0 ms (300-token prompt, 3 outputs), R1 at 0 ms (300, 2), R2 at 10 ms (100, 2).
// step 1 [0, 5.12 ms): no decodes; R0 prefills 300, R1 the remaining budget 212 → 512 prefill
//   tokens = 5.12 ms. R0's prompt is complete: R0 token 1 at 5.12 ms (TTFT 5.12).
//   KV: ⌈300/16⌉ + ⌈212/16⌉ = 19 + 14 = 33 blocks.
// step 2 [5.12, 11.00 ms): decode R0 (1 token), R1's last 88 prompt tokens → 0.88 + 5 = 5.88 ms.
//   R0 token 2 at 11.00 (gap 5.88); R1 token 1 at 11.00 (TTFT 11). KV: 19 (301) + 19 (300) = 38.
//   R2 arrives at 10 ms while the step runs; it waits for the step to end.
// step 3 [11.00, 17.00 ms): decode R0 and R1, prefill R2's 100 tokens → 1 + 5 = 6 ms.
//   R0 token 3 (done, E2E 17, gaps 5.88 and 6), R1 token 2 (done, E2E 17, gap 6), R2 token 1
//   (scheduled at 11 → scheduling delay 1, TTFT 17 − 10 = 7). KV: 19 + 19 + 7 = 45.
// step 4 [17.00, 22.00 ms): decode R2 → 5 ms. R2 done at 22 (E2E 12, gap 5). KV: ⌈101/16⌉ = 7.
// Distributions (nearest rank, n = 3: p50 = 2nd, p90 = p99 = 3rd of the sorted values):
//   TTFT {5.12, 11, 7}: mean 23.12/3 = 7.70667, p50 7, p90 11, max 11.
//   TBT {5.88, 6, 6, 5} (n = 4, p50 = 2nd): mean 22.88/4 = 5.72, p50 5.88, p90 6, max 6.
//   TPOT {(17 − 5.12)/2 = 5.94, (17 − 11)/1 = 6, (22 − 17)/1 = 5}: mean 16.94/3, p50 5.94.
//   E2E {17, 17, 12}: mean 46/3, p50 17. Scheduling delay {0, 0, 1}: mean 1/3, p50 0, p90 1.
// Run: makespan 22 ms, busy 22 ms of 22 (fraction 1); 3 / 0.022 req/s; 7 output tokens / 0.022;
// 700 prefill tokens / 0.022.
TEST_CASE("a fixed-cost run with two simultaneous arrivals batches them as computed by hand",
          "[golden]") {
  const auto dir = fresh_dir("golden_overlap");
  const auto r = run_simulate({"tests/tools/configs/golden_overlap.yaml", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  const long long us = 1'000, ms = 1'000'000;
  check_requests(CsvTable(dir / "requests.csv"), {{0, 0, 0, 5120 * us, 17 * ms, 300, 3},
                                                  {1, 0, 0, 11 * ms, 17 * ms, 300, 2},
                                                  {2, 10 * ms, 11 * ms, 17 * ms, 22 * ms, 100, 2}});

  const CsvTable steps(dir / "steps.csv");
  struct Step {
    long long start, duration, kv, prefill_tokens, prefills, decodes;
  };
  const std::vector<Step> expected{{0, 5120 * us, 33, 512, 2, 0},
                                   {5120 * us, 5880 * us, 38, 88, 1, 1},
                                   {11 * ms, 6 * ms, 45, 100, 1, 2},
                                   {17 * ms, 5 * ms, 7, 0, 0, 1}};
  REQUIRE(steps.rows().size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("step " << i);
    CHECK(steps.integer(i, "start_ns") == expected[i].start);
    CHECK(steps.integer(i, "duration_ns") == expected[i].duration);
    CHECK(steps.integer(i, "kv_blocks_used") == expected[i].kv);
    CHECK(steps.integer(i, "prefill_tokens") == expected[i].prefill_tokens);
    CHECK(steps.integer(i, "num_prefills") == expected[i].prefills);
    CHECK(steps.integer(i, "num_decodes") == expected[i].decodes);
    CHECK(steps.integer(i, "preempted") == 0);
  }

  const auto j = read_json(dir / "summary.json");
  CHECK(j["requests"]["arrived"] == 3);
  CHECK(j["requests"]["finished"] == 3);
  CHECK(j["requests"]["output_tokens"] == 7);
  CHECK(j["steps"] == 4);
  CHECK(j["makespan_s"].get<double>() == Approx(0.022).epsilon(1e-12));
  CHECK(j["throughput"]["requests_per_s"].get<double>() == Approx(3 / 0.022).epsilon(1e-12));
  CHECK(j["throughput"]["output_tokens_per_s"].get<double>() == Approx(7 / 0.022).epsilon(1e-12));
  CHECK(j["throughput"]["prefill_tokens_per_s"].get<double>() ==
        Approx(700 / 0.022).epsilon(1e-12));
  check_latency(j["latency_ms"]["ttft"], 3, 23.12 / 3, 7, 11, 11, 11);
  check_latency(j["latency_ms"]["tbt"], 4, 5.72, 5.88, 6, 6, 6);
  check_latency(j["latency_ms"]["tpot"], 3, 16.94 / 3, 5.94, 6, 6, 6);
  check_latency(j["latency_ms"]["e2e"], 3, 46.0 / 3, 17, 17, 17, 17);
  check_latency(j["latency_ms"]["scheduling_delay"], 3, 1.0 / 3, 0, 1, 1, 1);
  CHECK(j["replicas"][0]["busy_fraction"].get<double>() == Approx(1.0).epsilon(1e-12));
}

// The whole summary.json of golden_fixed.yaml is stored; any change to it must be deliberate:
// rerun with SERVESIM_UPDATE_GOLDEN=1 to rewrite tests/tools/golden/golden_fixed.summary.json and
// commit that file on its own.
TEST_CASE("the golden_fixed summary.json equals the stored golden file", "[golden]") {
  const auto dir = fresh_dir("golden_fixed_summary");
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto actual = read_json(dir / "summary.json");
  // What depends on the build and the checkout, not on the run, is left out: the version (a git
  // commit), the absolute paths of the config's folder and the input files, and the input files'
  // hashes (a refit hardware file is no change of this run; outputs_test checks the hashes).
  REQUIRE(actual["servesim_version"].is_string());
  actual["servesim_version"] = "(build)";
  REQUIRE(actual["config"]["config_dir"].is_string());
  actual["config"]["config_dir"] = "(checkout)/tests/tools/configs";
  for (auto& f : actual["inputs"]) {
    const std::string path = f["file"].get<std::string>();
    f["file"] = "(checkout)/" + path.substr(source_root().string().size() + 1);
    f["fnv1a64"] = "(hash)";
  }
  const auto golden_path = fixture("golden/golden_fixed.summary.json");
  const char* update = std::getenv("SERVESIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path) << actual.dump(2) << "\n";
    WARN("rewrote " << golden_path.string());
  }
  const auto golden = read_json(golden_path);
  INFO("differences (JSON patch from golden to actual): "
       << nlohmann::json::diff(golden, actual).dump());
  CHECK(actual == golden);
}

// The trace.json of golden_fixed.yaml is stored too (tests/tools/golden/golden_fixed.trace.json;
// SERVESIM_UPDATE_GOLDEN=1 rewrites it), after checking every event against the fields the Trace
// Event Format documents for its phase: Perfetto's importer needs nothing else.
TEST_CASE("the golden_fixed trace.json is well formed and equals the stored golden trace",
          "[golden]") {
  const auto dir = fresh_dir("golden_fixed_trace");
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string text = read_text(dir / "trace.json");
  const auto trace = nlohmann::json::parse(text);
  std::map<std::string, int> phases;
  for (const auto& e : trace.at("traceEvents")) {
    INFO(e.dump());
    const std::string ph = e.at("ph").get<std::string>();
    ++phases[ph];
    CHECK(e.at("pid").is_number_integer());
    CHECK(e.at("name").is_string());
    if (ph != "M") CHECK(e.at("ts").is_number());
    if (ph == "X") {
      CHECK(e.at("dur").get<double>() > 0);
      CHECK(e.at("tid").is_number_integer());
    }
    if (ph == "C") {
      for (const auto& [k, v] : e.at("args").items()) CHECK(v.is_number());
    }
    if (ph == "s" || ph == "f") CHECK(e.at("id").is_number_integer());
    if (ph == "f") CHECK(e.at("bp") == "e");
    if (ph == "M")
      CHECK(e.at("args").contains(e.at("name") == "process_sort_index" ? "sort_index" : "name"));
  }
  CHECK(phases["X"] == 12 + 3 * 2);  // the steps, and each request's prefill and decode
  CHECK(phases["C"] == 12 * 4);      // four counter samples a step
  CHECK(phases["s"] == 3 * 2);       // two arrows a request
  CHECK(phases["f"] == 3 * 2);
  const auto golden_path = fixture("golden/golden_fixed.trace.json");
  const char* update = std::getenv("SERVESIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path) << text;
    WARN("rewrote " << golden_path.string());
  }
  CHECK(text == read_text(golden_path));
}

}  // namespace servesim::test
