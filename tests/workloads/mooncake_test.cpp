#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/workloads/test_support.hpp"
#include "workloads/mooncake_reader.hpp"

using namespace servesim;
using namespace servesim::test;

namespace mooncake_test {

// A Mooncake trace with `lines` written to a fresh file under the temp folder; removed with it.
class TempTrace {
 public:
  TempTrace(const std::string& name, const std::string& lines)
      : path_((std::filesystem::temp_directory_path() / ("servesim_mooncake_" + name + ".jsonl"))
                  .string()) {
    std::ofstream(path_) << lines;
  }
  ~TempTrace() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const std::string kThree =
    "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 7, \"hash_ids\": [5, 6, 7]}\n"
    "{\"timestamp\": 250, \"input_length\": 1500, \"output_length\": 0, "
    "\"hash_ids\": [5, 6, 9]}\n"
    "{\"timestamp\": 1000, \"input_length\": 512, \"output_length\": 3, \"hash_ids\": [8]}\n";

std::string reader_error(const std::string& name, const std::string& lines) {
  TempTrace t(name, lines);
  MooncakeReader reader(t.path());
  MooncakeRow row;
  try {
    while (reader.next(row)) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for " << lines);
  return "";
}

TEST_CASE("the Mooncake reader reads each line's fields and chains its hash ids",
          "[workloads][mooncake]") {
  TempTrace t("fields", kThree);
  MooncakeReader reader(t.path());
  MooncakeRow a, b, c;
  REQUIRE(reader.next(a));
  REQUIRE(reader.next(b));
  REQUIRE(reader.next(c));
  MooncakeRow end;
  CHECK_FALSE(reader.next(end));
  CHECK(a.arrival == 0);
  CHECK(b.arrival == 250'000'000);  // ms to ns
  CHECK(c.arrival == 1'000'000'000);
  CHECK(a.prompt_tokens == 1100);
  CHECK(a.output_tokens == 7);
  CHECK(b.output_tokens == 1);  // 0 is raised to 1 and flagged
  CHECK(b.zero_output);
  CHECK_FALSE(a.zero_output);
  REQUIRE(a.hashes->chain.size() == 3);
  REQUIRE(b.hashes->chain.size() == 3);
  CHECK(a.hashes->block_tokens == 512);
  // Equal leading ids give equal chain values up to the first difference, and none after it.
  CHECK(a.hashes->chain[0] == b.hashes->chain[0]);
  CHECK(a.hashes->chain[1] == b.hashes->chain[1]);
  CHECK(a.hashes->chain[2] != b.hashes->chain[2]);
  CHECK(c.hashes->chain[0] != a.hashes->chain[0]);
  CHECK(a.hashes->chain[0] == chain_hash(0, 5));
  CHECK(a.hashes->chain[1] == chain_hash(chain_hash(0, 5), 6));
  // The same id after a different prefix is a different block.
  CHECK(chain_hash(chain_hash(0, 1), 6) != chain_hash(chain_hash(0, 5), 6));
  for (const std::int64_t v : a.hashes->chain) CHECK(v >= (std::int64_t{1} << 62));
}

TEST_CASE("a bad Mooncake line is an error naming its line and key", "[workloads][mooncake]") {
  const std::string ok =
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}\n";
  CHECK_THAT(
      reader_error("json", ok + "{\"timestamp\": 1,\n"),
      Catch::Contains("servesim_mooncake_json.jsonl:2:") && Catch::Contains("not a JSON object"));
  CHECK_THAT(reader_error("missing", ok + ok + "{\"timestamp\": 5, \"input_length\": 10}\n"),
             Catch::Contains(":3:") && Catch::Contains("no key 'output_length'"));
  CHECK_THAT(reader_error("negative",
                          "{\"timestamp\": 0, \"input_length\": -4, "
                          "\"output_length\": 1, \"hash_ids\": []}\n"),
             Catch::Contains(":1:") && Catch::Contains("key 'input_length'"));
  CHECK_THAT(reader_error("count",
                          "{\"timestamp\": 0, \"input_length\": 1000, "
                          "\"output_length\": 1, \"hash_ids\": [1]}\n"),
             Catch::Contains(":1:") && Catch::Contains("expected an array of 2 ids"));
  CHECK_THAT(reader_error("id",
                          "{\"timestamp\": 0, \"input_length\": 10, "
                          "\"output_length\": 1, \"hash_ids\": [\"x\"]}\n"),
             Catch::Contains("key 'hash_ids': id 0"));
  CHECK_THAT(reader_error("order",
                          "{\"timestamp\": 9, \"input_length\": 10, "
                          "\"output_length\": 1, \"hash_ids\": [1]}\n" +
                              ok),
             Catch::Contains(":2:") && Catch::Contains("earlier than the previous"));
}

TEST_CASE("a mooncake trace workload carries hash chains and rescales its arrivals",
          "[workloads][mooncake]") {
  TempTrace t("workload", kThree);
  auto w = make(trace_yaml("mooncake", t.path(), ", time_scale: 2"));
  const auto r = drain(*w);
  REQUIRE(r.size() == 3);
  CHECK(r[1].arrival == 500'000'000);
  CHECK(r[2].arrival == 2'000'000'000);
  CHECK(r[0].prefix_group == -1);
  CHECK(r[0].prefix_tokens == 1100);  // every prompt token is hashed
  CHECK(r[2].prefix_tokens == 512);
  REQUIRE(r[1].hashes);
  CHECK(r[1].hashes->chain.size() == 3);
  CHECK(r[1].output_tokens == 1);
  CHECK(w->expected_requests() == 3);
  // qps: (rows − 1) / span = 2 / 1 s in the file, rescaled to 4 per second.
  auto fast = make(trace_yaml("mooncake", t.path(), ", qps: 4"));
  CHECK(drain(*fast)[2].arrival == 500'000'000);
  // Clipping shortens the hashed prefix with the prompt.
  auto clipped = make(trace_yaml("mooncake", t.path(), "", "  max_tokens: 600\n"));
  CHECK(drain(*clipped)[0].prefix_tokens == 599);
}

TEST_CASE("a mooncake trace refuses shared_prefix and an unknown format lists it",
          "[workloads][mooncake]") {
  TempTrace t("combos", kThree);
  CHECK_THAT(error_of(trace_yaml("mooncake", t.path(), "",
                                 "  shared_prefix: {num_groups: 2, prefix_tokens: 10}\n")),
             Catch::Contains("test.yaml:2:19") && Catch::Contains("shared_prefix"));
  CHECK_THAT(error_of(trace_yaml("moon", t.path())),
             Catch::Contains("known: azure, measured, mooncake, vidur"));
}

TEST_CASE("the shipped Mooncake traces read to the end", "[workloads][mooncake]") {
  for (const char* name : {"mooncake/conversation_trace.jsonl", "mooncake/synthetic_trace.jsonl"}) {
    MooncakeReader reader(data_file(name));
    MooncakeRow row;
    std::int64_t rows = 0;
    while (reader.next(row)) ++rows;
    CHECK(rows == (std::string(name).find("conversation") != std::string::npos ? 12031 : 3993));
  }
}

}  // namespace mooncake_test
