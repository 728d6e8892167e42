// Speculative decoding end to end: `simulate` with a `speculative:` section against the same
// config without it, its summary and request columns, determinism, and its bad inputs.
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/tools/bad_input.hpp"
#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSpeculative = "tests/tools/configs/speculative.yaml";

// The speculative config without its `speculative:` section, written to a fresh folder.
std::string plain_config() {
  const std::string text = read_text(source_root() / kSpeculative);
  const auto dir = fresh_dir("speculative_plain_config");
  const fs::path path = dir / "plain.yaml";
  std::ofstream(path) << text.substr(0, text.find("\nspeculative:") + 1);
  return path.string();
}

// The speculative config with EAGLE heads in place of the draft model.
std::string eagle_config() {
  std::string text = read_text(source_root() / kSpeculative);
  const std::string draft = "method: draft\n  draft_model: meta-llama/Llama-3.2-1B";
  const auto at = text.find(draft);
  REQUIRE(at != std::string::npos);
  text.replace(at, draft.size(), "method: eagle");
  const auto dir = fresh_dir("speculative_eagle_config");
  const fs::path path = dir / "eagle.yaml";
  std::ofstream(path) << text;
  return path.string();
}

bool has_column(const fs::path& csv, const std::string& column) {
  const CsvTable t(csv);
  return !t.rows().empty() && t.rows()[0].count(column) == 1;
}

double e2e_mean(const nlohmann::json& s) { return s["latency_ms"]["e2e"]["mean"].get<double>(); }

}  // namespace

TEST_CASE("speculation that accepts nothing is never faster than plain decoding", "[speculative]") {
  const auto plain = read_json(run_ok("spec_plain", {plain_config()}) / "summary.json");
  CHECK_FALSE(plain.contains("speculative"));
  for (const char* method : {"draft", "eagle"}) {
    INFO(method);
    const std::string config = std::string(method) == "eagle" ? eagle_config() : kSpeculative;
    const std::vector<std::string> args{config, "--set", "speculative.acceptance_rate=0"};
    const auto s = read_json(run_ok(std::string("spec_zero_") + method, args) / "summary.json");
    REQUIRE(s.contains("speculative"));
    CHECK(s["speculative"]["accepted_tokens"] == 0);
    CHECK(s["speculative"]["mean_acceptance_length"].get<double>() == 1.0);
    CHECK(s["requests"]["output_tokens"] == plain["requests"]["output_tokens"]);
    CHECK(s["makespan_s"].get<double>() >= plain["makespan_s"].get<double>());
    CHECK(e2e_mean(s) > e2e_mean(plain));
  }
}

TEST_CASE("speculation that accepts everything emits k + 1 tokens per verify", "[speculative]") {
  const auto dir = run_ok("spec_one", {kSpeculative, "--set", "speculative.acceptance_rate=1"});
  const auto s = read_json(dir / "summary.json");
  CHECK(s["speculative"]["acceptance_rate"].get<double>() == 1.0);
  const CsvTable req(dir / "requests.csv");
  REQUIRE(req.rows().size() == 120);
  for (std::size_t i = 0; i < req.rows().size(); ++i) {
    // n − 1 tokens after the first, 4 per decode step; a last step with one token left has no
    // drafts (it would pass the output), every other one verifies 3 accepted drafts.
    const long long after_first = req.integer(i, "output_tokens") - 1;
    const long long steps = (after_first + 3) / 4;
    const long long plain_last = after_first % 4 == 1 ? 1 : 0;
    INFO("request " << i << " output " << after_first + 1);
    CHECK(req.integer(i, "spec_steps") == steps - plain_last);
    CHECK(req.integer(i, "spec_accepted_tokens") == after_first - steps);
  }
  // Fewer target passes than plain decoding: the run ends sooner.
  const auto plain = read_json(run_ok("spec_one_plain", {plain_config()}) / "summary.json");
  CHECK(s["makespan_s"].get<double>() < plain["makespan_s"].get<double>());
}

TEST_CASE("a speculative run is byte-identical for its seed and its columns only appear with it",
          "[speculative]") {
  const auto a = run_ok("spec_det_a", {kSpeculative});
  const auto b = run_ok("spec_det_b", {kSpeculative});
  CHECK(read_text(a / "requests.csv") == read_text(b / "requests.csv"));
  CHECK(read_text(a / "summary.json").size() > 0);
  const auto c = run_ok("spec_det_c", {kSpeculative, "--seed", "6"});
  CHECK(read_text(a / "requests.csv") != read_text(c / "requests.csv"));
  const auto s = read_json(a / "summary.json");
  const double length = s["speculative"]["mean_acceptance_length"].get<double>();
  // α = 0.6, k = 3: 1 + 0.6 + 0.36 + 0.216 = 2.176 expected, drafts cut at output ends aside.
  CHECK(s["speculative"]["expected_acceptance_length"].get<double>() == Approx(2.176));
  CHECK(length == Approx(2.176).epsilon(0.06));
  CHECK(has_column(a / "requests.csv", "spec_steps"));
  const auto plain = run_ok("spec_det_plain", {plain_config()});
  CHECK_FALSE(has_column(plain / "requests.csv", "spec_steps"));
}

TEST_CASE("bad speculative input is an error naming where it is", "[speculative][errors]") {
  CHECK_THAT(
      bad_input_message("spec_unknown_draft", {"tests/tools/bad/speculative_unknown_draft.yaml"}),
      Catch::Contains("tests/tools/bad/speculative_unknown_draft.yaml:6:") &&
          Catch::Contains("meta-llama/Llama-9-1B"));
  CHECK_THAT(
      bad_input_message("spec_k0", {kSpeculative, "--set", "speculative.num_speculative_tokens=0"}),
      Catch::Contains("speculative.num_speculative_tokens") &&
          Catch::Contains("expected an integer from 1 to 64, got 0"));
  CHECK_THAT(
      bad_input_message("spec_alpha", {kSpeculative, "--set", "speculative.acceptance_rate=1.5"}),
      Catch::Contains("speculative.acceptance_rate"));
}

TEST_CASE("the drafter's weights and KV come off the replica's KV cache", "[speculative]") {
  const auto blocks = [](const fs::path& dir) {
    return read_json(dir / "summary.json")["replicas"][0]["kv_blocks"].get<double>();
  };
  const double plain = blocks(run_ok("spec_mem_plain", {plain_config()}));
  const double draft = blocks(run_ok("spec_mem_draft", {kSpeculative}));
  const double eagle = blocks(run_ok("spec_mem_eagle", {eagle_config()}));
  // Llama-3.2-1B beside Llama-3.1-8B on an H100: its 16 layers of 8 × 64 KV heads add a quarter
  // to each 2 MiB block and its 2.3 GiB of weights come off the 56 GiB free; one EAGLE layer
  // adds 1/32 to each block and about 0.4 GiB of weights.
  CHECK(draft / plain == Approx((1 - 2.30 / 56.0) / 1.25).epsilon(0.01));
  CHECK(eagle / plain == Approx((1 - 0.41 / 56.0) / (1 + 1.0 / 32)).epsilon(0.01));
}

}  // namespace servesim::test
