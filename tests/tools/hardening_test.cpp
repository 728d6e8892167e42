// What fuzzing the parsers found, each as `simulate` meets it: bad input exits 1 with
// file:line (or the --set flag) and what was expected; never exit 3, a crash or a hang.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kConfig = "tests/tools/configs/golden_fixed.yaml";

// Runs simulate with `args` into its own output folder (which it returns beside the result).
struct Run {
  CommandResult result;
  fs::path out;
};
Run simulate_in(const std::string& name, std::vector<std::string> args) {
  const auto dir = fresh_dir("hardening_" + name);
  args.insert(args.end(), {"--out", dir.string(), "--quiet"});
  return {run_simulate(args), dir};
}

// Runs simulate on golden_fixed.yaml with `sets`; requires exit 1 and returns the message.
std::string rejected(const std::string& name, const std::vector<std::string>& sets) {
  std::vector<std::string> args{kConfig};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const auto r = simulate_in(name, args).result;
  INFO(r.output);
  CHECK(r.exit_code == 1);
  return r.output;
}

fs::path write_file(const std::string& name, const std::string& file, const std::string& text) {
  const auto dir = fresh_dir("hardening_files_" + name);
  std::ofstream(dir / file) << text;
  return dir / file;
}

std::string azure(const fs::path& file) {
  return "workload={trace: {format: azure, file: " + file.string() + "}}";
}

}  // namespace

TEST_CASE("an Azure timestamp outside int64 nanoseconds is an error at its line", "[hardening]") {
  const auto late = write_file("year9999", "t.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "2023-11-16 18:15:46.6805900,10,5\n9999-01-01 00:00:00,10,5\n");
  CHECK_THAT(rejected("year9999", {azure(late)}),
             Catch::Contains("t.csv:3: column 'TIMESTAMP': expected a date-time "
                             "'YYYY-MM-DD HH:MM:SS.fffffff' in the years 1678–2261, got "
                             "'9999-01-01 00:00:00'"));
  const auto all2300 = write_file("year2300", "t.csv",
                                  "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                  "2300-01-01 00:00:00,10,5\n2300-01-01 00:00:01,10,5\n");
  CHECK_THAT(rejected("year2300", {azure(all2300)}),
             Catch::Contains("t.csv:2: column 'TIMESTAMP'") && Catch::Contains("1678–2261"));
  // Both ends inside int64 but 550 years apart: past the horizon, not a wrapped difference.
  const auto span = write_file("span", "t.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "1700-01-01 00:00:00,10,5\n2250-01-01 00:00:00,10,5\n");
  CHECK_THAT(rejected("span", {azure(span)}),
             Catch::Contains("t.csv:3: column 'TIMESTAMP': expected a date-time at most 1e+09 s "
                             "(the simulated-time horizon) after the first row's"));
}

TEST_CASE("staged gap_s and duration_s past the time horizon are errors at the key",
          "[hardening]") {
  CHECK_THAT(rejected("gap", {"workload.arrival={kind: stages, gap_s: 1e30, stages: [{rate: 1, "
                              "duration_s: 2}, {rate: 1, duration_s: 2}]}"}),
             Catch::Contains("--set workload.arrival=") &&
                 Catch::Contains("1e+30 s is past the simulated-time horizon (1e+09 s)"));
  CHECK_THAT(rejected("duration", {"workload.arrival={kind: stages, stages: [{rate: 1e-20, "
                                   "duration_s: 1e20}]}"}),
             Catch::Contains("1e+20 s is past the simulated-time horizon (1e+09 s)"));
  // Each stage inside the horizon, their sum past it.
  CHECK_THAT(rejected("sum", {"workload.arrival={kind: stages, gap_s: 6e8, stages: [{rate: 1e-8, "
                              "duration_s: 1e8}, {rate: 1e-8, duration_s: 5e8}]}"}),
             Catch::Contains("the stages so far end 1.2e+09 s into the run, past the "
                             "simulated-time horizon (1e+09 s)"));
}

TEST_CASE("a map key that is a list or a map is an error at its line and column", "[hardening]") {
  const auto list_key = write_file("list_key", "c.yaml", "name: x\n[a, b]: 1\n");
  auto r = simulate_in("list_key", {list_key.string()}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("c.yaml:2:1: a key that is a list (expected a plain name "
                                       "before ':')"));
  // `? [a, b]: 1` is an explicit key holding the map {[a, b]: 1}.
  const auto explicit_key = write_file("explicit_key", "c.yaml", "? [a, b]: 1\nname: x\n");
  r = simulate_in("explicit_key", {explicit_key.string()}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("c.yaml:1:3: a key that is a map"));
  const auto map_key = write_file("map_key", "c.yaml", "name: x\n{scheduler: 1}: {kind: vllm}\n");
  r = simulate_in("map_key", {map_key.string()}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("c.yaml:2:1: a key that is a map"));
  CHECK_THAT(
      rejected("set_list_key", {"scheduler={? [a]: 1}"}),
      Catch::Contains("--set scheduler={? [a]: 1}") && Catch::Contains("a key that is a list"));
}

TEST_CASE("a --set through a value, or onto a config that is a value, is an input error",
          "[hardening]") {
  CHECK_THAT(rejected("set_scalar", {"replicas.0=yes", "replicas.0.tp=1"}),
             Catch::Contains("--set replicas.0.tp=1: '0' is a value, not a section"));
  const auto scalar = write_file("scalar_config", "c.yaml", "5\n");
  const auto r = simulate_in("scalar_config", {scalar.string(), "--set", "seed=1"}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--set seed=1: the config is '5', not a map of sections"));
}

TEST_CASE("a symlink loop or a path too long is an input error naming the path", "[hardening]") {
  const auto dir = fresh_dir("hardening_symlinks");
  fs::create_symlink(dir / "b.yaml", dir / "a.yaml");
  fs::create_symlink(dir / "a.yaml", dir / "b.yaml");
  const auto r = simulate_in("loop", {(dir / "a.yaml").string()}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("a.yaml: Too many levels of symbolic links (expected a YAML "
                                       "file)"));
  std::string long_path;
  for (int i = 0; i < 600; ++i) long_path += "/abcdefgh";
  CHECK_THAT(rejected("long_trace", {"workload.lengths={kind: trace, file: " + long_path + "}"}),
             Catch::Contains("File name too long (expected a readable CSV file)"));
  CHECK_THAT(rejected("long_catalog", {"catalog=" + long_path}), Catch::Contains("no such folder"));
  const auto env = run_command("env", {"SERVESIM_CATALOG=" + (dir / "a.yaml").string(),
                                       simulate_binary(), kConfig, "--no-outputs"});
  INFO(env.output);
  CHECK(env.exit_code == 1);
  CHECK_THAT(env.output, Catch::Contains("SERVESIM_CATALOG"));
}

TEST_CASE("a staged stage of 10^12 requests costs only the requests drawn", "[hardening]") {
  const auto run = simulate_in("huge_stage", {kConfig, "--set",
                                              "workload.arrival={kind: stages, stages: [{rate: "
                                              "1e6, duration_s: 1e6}]}",
                                              "--set", "workload.num_requests=5"});
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  CHECK(read_json(run.out / "summary.json")["requests"]["arrived"] == 5);
}

TEST_CASE("a zipf range of 2^31 tokens starts at once", "[hardening]") {
  const auto run = simulate_in(
      "wide_zipf", {kConfig, "--set",
                    "workload.lengths={kind: zipf, min_tokens: 1, max_tokens: 2147483647, theta: "
                    "0.6, prefill_decode_ratio: 2}",
                    "--set", "scheduler.num_gpu_blocks=100000000", "--set",
                    "scheduler.max_model_len=2147483647"});
  INFO(run.result.output);
  // Requests that large are refused by the fleet, not a hang: what counts is that it ends.
  CHECK((run.result.exit_code == 0 || run.result.exit_code == 1));
}

TEST_CASE("a fleet larger than the replica limit is an error before it is built", "[hardening]") {
  CHECK_THAT(rejected("count", {"replicas.0.count=2147483647"}),
             Catch::Contains("--set replicas.0.count=2147483647: ") &&
                 Catch::Contains("count 2147483647 makes the fleet 2147483647 replicas, more than "
                                 "the 100000 a run may have"));
}

TEST_CASE("devices, pipes and overlong lines are refused, not read without end", "[hardening]") {
  auto r = simulate_in("dev_zero_config", {"/dev/zero"}).result;
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output,
             Catch::Contains("/dev/zero: is not a regular file (a device, pipe or socket)"));
  CHECK_THAT(rejected("dev_zero_file", {"workload.lengths={kind: trace, file: /dev/zero}"}),
             Catch::Contains("'/dev/zero': is not a regular file"));
  const auto long_line =
      write_file("long_line", "l.csv", "input_tokens,output_tokens\n" + std::string(1 << 21, '1'));
  CHECK_THAT(
      rejected("long_line", {"workload.lengths={kind: trace, file: " + long_line.string() + "}"}),
      Catch::Contains("l.csv:2: a line longer than 1048576 bytes"));
}

TEST_CASE("a gamma cv outside [0.01, 100] is an error at the key", "[hardening]") {
  for (const char* cv : {"1e-300", "1e300"}) {
    CHECK_THAT(rejected(std::string("cv") + cv,
                        {std::string("workload.arrival={kind: gamma, qps: 1, cv: ") + cv + "}"}),
               Catch::Contains("--set workload.arrival=") &&
                   Catch::Contains("expected a coefficient of variation in [0.01, 100]"));
  }
}

}  // namespace servesim::test

namespace servesim::test {

// The output files of a run that does not finish must not look like a result: `blocker` (an
// output's .part name) is made a folder that cannot be removed, so that file cannot be written.
TEST_CASE("an output that cannot be written leaves no file of the run behind", "[hardening]") {
  for (const char* blocked : {"trace.json.part", "summary.json.part"}) {
    INFO(blocked);
    const auto dir = fresh_dir(std::string("hardening_blocked_") + blocked);
    // An earlier complete run in the folder: it must not survive as if it were this one's.
    REQUIRE(run_simulate({kConfig, "--out", dir.string(), "--quiet"}).exit_code == 0);
    fs::create_directories(dir / blocked / "x");
    const auto r = run_simulate({kConfig, "--out", dir.string(), "--quiet"});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains(blocked));
    for (const auto& e : fs::directory_iterator(dir)) {
      CHECK(e.path().filename() == blocked);  // nothing else: no final name, no other .part
    }
  }
}

}  // namespace servesim::test
