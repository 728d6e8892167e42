#include "sim/output/chrome_trace_writer.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/config/input_error.hpp"
#include "tests/sim/test_output.hpp"

namespace servesim {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

StepRecord step(std::int64_t start_ns, std::int64_t duration_ns, std::int32_t replica,
                std::int32_t prefill_tokens, std::int32_t decodes) {
  return StepRecord{start_ns,
                    duration_ns,
                    100 + replica,
                    replica,
                    prefill_tokens,
                    prefill_tokens > 0 ? 1 : 0,
                    decodes,
                    0,
                    decodes + 1,
                    2,
                    0.0};
}

TEST_CASE("a trace lists replica names and one complete event per step", "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "trace.json";
  {
    ChromeTraceWriter writer(path.string(), 100);
    writer.add_replica(0, "h200");
    writer.add_replica(1, "a100 \"80GB\"");  // quotes must be escaped
    writer.add_step(step(0, 25'123'456, 0, 512, 37));
    writer.add_step(step(1'000, 999, 1, 0, 8));
    writer.add_step(step(25'123'456, 5, 0, 2048, 0));
    writer.close();
    CHECK(writer.steps() == 3);
    CHECK(writer.steps_omitted() == 0);
  }
  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  const auto& all = trace.at("traceEvents");
  // Per step: its slice and four counter samples (KV, requests, tokens at start and at end).
  REQUIRE(all.size() == 4 + 3 * 5);
  std::vector<nlohmann::json> events, counters;
  for (const auto& e : all) (e.at("ph") == "C" ? counters : events).push_back(e);
  REQUIRE(events.size() == 4 + 3);

  CHECK(events[0].at("ph") == "M");
  CHECK(events[0].at("name") == "process_name");
  CHECK(events[0].at("pid") == 0);
  CHECK(events[0].at("args").at("name") == "replica 0 (h200)");
  CHECK(events[1].at("name") == "process_sort_index");
  CHECK(events[2].at("args").at("name") == "replica 1 (a100 \"80GB\")");

  const auto& first = events[4];
  CHECK(first.at("ph") == "X");
  CHECK(first.at("name") == "prefill 512 + decode 37");
  CHECK(first.at("pid") == 0);
  CHECK(first.at("tid") == 0);
  CHECK(first.at("ts").get<double>() == 0.0);
  CHECK(first.at("dur").get<double>() == Approx(25'123.456).epsilon(1e-12));
  CHECK(first.at("args").at("prefill_tokens") == 512);
  CHECK(first.at("args").at("decodes") == 37);
  CHECK(first.at("args").at("kv_blocks") == 100);
  CHECK(first.at("args").at("running") == 38);
  CHECK(first.at("args").at("waiting") == 2);
  CHECK(events[5].at("name") == "decode 8");
  CHECK(events[5].at("pid") == 1);
  CHECK(events[5].at("ts").get<double>() == 1.0);
  CHECK(events[5].at("dur").get<double>() == Approx(0.999).epsilon(1e-12));
  CHECK(events[6].at("name") == "prefill 2048");
  // The first step's counters: KV used, running/waiting, its tokens, then zero tokens at its end.
  REQUIRE(counters.size() == 12);
  CHECK(counters[0].at("name") == "KV blocks");
  CHECK(counters[0].at("pid") == 0);
  CHECK(counters[0].at("args").at("used") == 100);
  CHECK(counters[1].at("name") == "requests");
  CHECK(counters[1].at("args") == nlohmann::json{{"running", 38}, {"waiting", 2}});
  CHECK(counters[2].at("name") == "batch tokens");
  CHECK(counters[2].at("args") == nlohmann::json{{"prefill", 512}, {"decode", 37}});
  CHECK(counters[3].at("ts").get<double>() == Approx(25'123.456).epsilon(1e-12));
  CHECK(counters[3].at("args") == nlohmann::json{{"prefill", 0}, {"decode", 0}});
  CHECK(trace.at("otherData").at("steps_omitted") == 0);
  CHECK(trace.at("displayTimeUnit") == "ms");

  // Microseconds carry exactly three decimals, taken from the integer ns.
  const std::string text = read_text(path);
  CHECK(text.find("\"ts\":25123.456,\"dur\":0.005") != std::string::npos);
  CHECK(text.find("\"dur\":25123.456") != std::string::npos);
}

TEST_CASE("steps past max_events are counted but not written", "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "capped.json";
  ChromeTraceWriter writer(path.string(), 1000);
  writer.add_replica(0, "h100");
  for (std::int64_t i = 0; i < 2500; ++i) writer.add_step(step(i * 10'000, 9'000, 0, 0, 4));
  CHECK(writer.steps_written() == 1000);
  CHECK(writer.steps_omitted() == 1500);
  writer.close();

  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  std::int64_t complete = 0;
  double last_ts = -1;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") {
      ++complete;
      last_ts = e.at("ts").get<double>();
    }
  }
  CHECK(complete == 1000);
  CHECK(last_ts == 9'990.0);  // the first 1000 steps are the ones kept
  const auto& other = trace.at("otherData");
  CHECK(other.at("steps") == 2500);
  CHECK(other.at("steps_written") == 1000);
  CHECK(other.at("steps_omitted") == 1500);
  CHECK(other.at("max_events") == 1000);
}

TEST_CASE("KV transfers are slices on their decode replica's own track, capped like requests",
          "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "transfers.json";
  ChromeTraceWriter writer(path.string(), 1000, /*max_requests=*/2);
  // Request 7: first token at 1 ms, copy from 1.5 ms to 1.8 ms; then 8 into the same replica,
  // then 9, past the cap.
  writer.add_transfer({7, 0, 3, 1'000'000, 1'500'000, 1'800'000, 862, 112984064.0});
  writer.add_transfer({8, 1, 3, 2'000'000, 2'000'000, 2'250'500, 100, 1.31e7});
  writer.add_transfer({9, 1, 2, 3'000'000, 3'000'000, 3'100'000, 100, 1.31e7});
  CHECK(writer.transfers() == 3);
  CHECK(writer.transfers_written() == 2);
  writer.close();

  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  std::vector<nlohmann::json> slices;
  int names = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      ++names;
      CHECK(e.at("pid") == 3);
      CHECK(e.at("tid") == 1);
      CHECK(e.at("args").at("name") == "KV transfers in");
    }
    if (e.at("ph") == "X") slices.push_back(e);
  }
  CHECK(names == 1);  // one track name per decode replica
  REQUIRE(slices.size() == 2);
  const auto& first = slices[0];
  CHECK(first.at("name") == "KV of request 7 from replica 0");
  CHECK(first.at("pid") == 3);
  CHECK(first.at("ts").get<double>() == 1500.0);
  CHECK(first.at("dur").get<double>() == 300.0);
  CHECK(first.at("args").at("tokens") == 862);
  CHECK(first.at("args").at("bytes") == 112984064);
  CHECK(first.at("args").at("waited_us").get<double>() == 500.0);
  CHECK(slices[1].at("dur").get<double>() == 250.5);
  CHECK(slices[1].at("args").at("waited_us").get<double>() == 0.0);
  CHECK(trace.at("otherData").at("transfers") == 3);
  CHECK(trace.at("otherData").at("transfers_written") == 2);
}

TEST_CASE("an empty trace is still valid JSON", "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "empty.json";
  { ChromeTraceWriter writer(path.string()); }  // the destructor closes
  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  CHECK(trace.at("traceEvents").empty());
  CHECK(trace.at("otherData").at("steps") == 0);
}

TEST_CASE("identical steps give byte-identical traces", "[chrome_trace_writer]") {
  auto write = [](const fs::path& path) {
    ChromeTraceWriter writer(path.string(), 15'000);
    writer.add_replica(0, "h200");
    writer.add_replica(1, "h200");
    // Enough events to pass through several internal buffer flushes.
    for (std::int64_t i = 0; i < 20'000; ++i) {
      writer.add_step(step(i * 7'919, 7'000 + i % 1000, static_cast<std::int32_t>(i % 2),
                           static_cast<std::int32_t>(i % 3 == 0 ? 256 : 0),
                           static_cast<std::int32_t>(i % 64)));
    }
  };
  const fs::path a = test::test_output_dir("chrome_trace_writer") / "same_a.json";
  const fs::path b = test::test_output_dir("chrome_trace_writer") / "same_b.json";
  write(a);
  write(b);
  const std::string text = read_text(a);
  CHECK(text == read_text(b));
  const nlohmann::json trace = nlohmann::json::parse(text);
  CHECK(trace.at("traceEvents").size() == 4 + 15'000 * 5);
  CHECK(trace.at("otherData").at("steps_omitted") == 5'000);
}

RequestRecord request(std::int64_t id, std::int32_t replica, bool rejected) {
  RequestRecord r{};
  r.id = id;
  r.arrival_ns = 1'000 * id;
  r.first_scheduled_ns = rejected ? -1 : r.arrival_ns + 500;
  r.first_token_ns = rejected ? -1 : r.arrival_ns + 2'500;
  r.finished_ns = rejected ? -1 : r.arrival_ns + 9'500;
  r.prompt_tokens = 100;
  r.output_tokens = 4;
  r.replica = rejected ? -1 : replica;
  r.rejected = rejected ? 1 : 0;
  return r;
}

TEST_CASE("requests are tracks of their own with arrows to the steps that served them",
          "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "requests.json";
  {
    ChromeTraceWriter writer(path.string(), 100, 2);
    writer.add_replica(0, "h200");
    writer.add_step(step(500, 2'000, 0, 100, 0));
    writer.add_request(request(0, 0, false));
    writer.add_request(request(1, 0, true));
    writer.add_request(request(2, 0, false));  // past max_requests: counted only
    CHECK(writer.requests() == 3);
    CHECK(writer.requests_written() == 2);
  }
  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  std::vector<nlohmann::json> slices, flows;
  bool named = false, rejected = false;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("pid") != ChromeTraceWriter::kRequestsPid && e.at("ph") != "f") continue;
    if (e.at("ph") == "X") slices.push_back(e);
    if (e.at("ph") == "s" || e.at("ph") == "f") flows.push_back(e);
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      named = named || e.at("args").at("name") == "request 0 (100 + 4 tokens)";
    }
    if (e.at("ph") == "i") rejected = e.at("name") == "rejected" && e.at("tid") == 1;
  }
  CHECK(named);
  CHECK(rejected);
  REQUIRE(slices.size() == 3);
  CHECK(slices[0].at("name") == "queued");
  CHECK(slices[0].at("ts").get<double>() == 0.0);
  CHECK(slices[0].at("dur").get<double>() == Approx(0.5));
  CHECK(slices[1].at("name") == "prefill");
  CHECK(slices[2].at("name") == "decode");
  CHECK(slices[2].at("dur").get<double>() == Approx(7.0));
  // Two arrows: one into the step that scheduled it (at its start), one into the last step
  // (1 ns before the request's end), each a start on the request's track and a bound finish on
  // the replica's.
  REQUIRE(flows.size() == 4);
  CHECK(flows[0].at("ph") == "s");
  CHECK(flows[0].at("tid") == 0);
  CHECK(flows[1].at("ph") == "f");
  CHECK(flows[1].at("bp") == "e");
  CHECK(flows[1].at("pid") == 0);
  CHECK(flows[1].at("id") == flows[0].at("id"));
  CHECK(flows[1].at("ts").get<double>() == Approx(0.5));
  CHECK(flows[3].at("ts").get<double>() == Approx(9.499));
  const auto& other = trace.at("otherData");
  CHECK(other.at("requests") == 3);
  CHECK(other.at("requests_written") == 2);
}

TEST_CASE("a trace at its size limits is still valid JSON", "[chrome_trace_writer]") {
  const fs::path path = test::test_output_dir("chrome_trace_writer") / "limits.json";
  {
    ChromeTraceWriter writer(path.string(), 50, 20);
    writer.add_replica(0, "h100");
    for (std::int64_t i = 0; i < 500; ++i) {
      writer.add_step(step(i * 10'000, 9'000, 0, 16, 3));
      writer.add_request(request(i, 0, i % 7 == 0));
    }
  }
  const nlohmann::json trace = nlohmann::json::parse(read_text(path));
  CHECK(trace.at("otherData").at("steps_written") == 50);
  CHECK(trace.at("otherData").at("requests_written") == 20);
}

TEST_CASE("adding to a closed trace or opening a bad path throws InputError",
          "[chrome_trace_writer]") {
  const std::string bad =
      (test::test_output_dir("chrome_trace_writer") / "no_such_dir" / "trace.json").string();
  try {
    ChromeTraceWriter writer(bad);
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(bad) == 0);
  }
  ChromeTraceWriter writer((test::test_output_dir("chrome_trace_writer") / "closed.json").string());
  writer.close();
  CHECK_THROWS_AS(writer.add_step(step(0, 1, 0, 1, 0)), InputError);
  CHECK_THROWS_AS(writer.add_replica(0, "x"), InputError);
  CHECK_THROWS_AS(writer.add_request(request(0, 0, false)), InputError);
}

}  // namespace
}  // namespace servesim
