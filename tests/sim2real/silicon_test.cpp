// sim2real --silicon's library: reading an InferenceX silicon file (bad input named by file, line
// and column), what each row becomes (a run, or the reason it cannot be one), and a vLLM row that
// replays within a stated band of its measurement.
#include "tools/sim2real/silicon.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

namespace servesim::sim2real {
namespace {

const std::string kRows =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/sim2real/data/silicon_rows.csv";

// A copy of the fixture with `from` replaced by `to` in its text.
std::string edited(const std::string& name, const std::string& from, const std::string& to) {
  std::ifstream in(kRows);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  const std::string path = (std::filesystem::temp_directory_path() / ("silicon_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_silicon_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for " << path);
  return "";
}

}  // namespace

TEST_CASE("every silicon row is run or listed with the reason it is not", "[silicon]") {
  const auto rows = read_silicon_file(kRows);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].concurrency == 8);
  CHECK(rows[0].tp == 2);
  CHECK(rows[0].ttft_ms == Approx(154.2481).epsilon(1e-6));
  CHECK(rows[1].concurrency == 256);  // a disaggregated row: silicon_concurrency= in its source
  const auto results = replay_silicon_rows(rows, SiliconOptions{});
  const auto report = silicon_report_json(results, SiliconOptions{});
  CHECK(report["coverage"]["rows"] == 6);
  CHECK(report["coverage"]["run"] == 1);
  std::vector<std::string> reasons;
  for (const auto& n : report["not_run"]) reasons.push_back(n["reason"].get<std::string>());
  CHECK(reasons ==
        std::vector<std::string>{"disaggregated (prefill and decode pools)",
                                 "no engine profile for sglang", "precision fp4 is not priced",
                                 "attention data parallelism", "no engine profile for trtllm"});
  // The run replays InferenceX's client against vLLM's launch flags.
  const std::string& y = results[0].plan.config_yaml;
  CHECK_THAT(y, Catch::Contains("client: {max_concurrency: 8}"));
  CHECK_THAT(y, Catch::Contains("input_len: 1024, output_len: 128, range_ratio: 0.8"));
  CHECK_THAT(y, Catch::Contains("max_model_len: 10240"));
  CHECK_THAT(y, Catch::Contains("enable_prefix_caching: false"));
}

TEST_CASE("a vLLM silicon row replays within its band", "[silicon]") {
  // Qwen3-32B BF16 on two H100s, vLLM, ISL 1024 × OSL 128 at concurrency 8; no constant of the
  // analytical model was fitted on silicon rows. Measured: TTFT 154.2 ms, TPOT 18.04 ms. The
  // band is the error this replay has (TTFT −11%, TPOT +1%) with room: a guard against drift.
  const std::vector<SiliconRow> first{read_silicon_file(kRows).front()};
  const auto results = replay_silicon_rows(first, SiliconOptions{});
  const nlohmann::json report = silicon_report_json(results, SiliconOptions{});
  const nlohmann::json& m = report["rows"][0]["metrics"];
  CHECK(std::abs(m["ttft_mean"]["error_pct"].get<double>()) < 20);
  CHECK(std::abs(m["tpot_mean"]["error_pct"].get<double>()) < 5);
}

TEST_CASE("bad silicon input names the file, line and column", "[silicon]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(error_of(edited("no_ttft.csv", "silicon_ttft_ms", "ttft")),
             Contains("missing column 'silicon_ttft_ms'"));
  CHECK_THAT(
      error_of(edited("zero_conc.csv", ",8,2,1,", ",0,2,1,")),
      Contains("zero_conc.csv:2: column 'batch_size': expected a whole number ≥ 1, got '0'"));
  CHECK_THAT(error_of(edited("bad_precision.csv", "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,",
                             "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp7,")),
             Contains("bad_precision.csv:2: column 'precision'"));
  CHECK_THAT(error_of(edited("bad_isl.csv", "agg,1024,128", "agg,-5,128")),
             Contains("bad_isl.csv:2: column 'isl': expected a whole number ≥ 1"));
}

}  // namespace servesim::sim2real
