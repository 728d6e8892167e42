// Bad inputs make `simulate` exit 1 with a message that says where (file:line:col, or the --set
// that caused it) and what was expected; usage errors exit 2. Fixtures live in tests/tools/bad/.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/tools/bad_input.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace {

std::string bad_file_message(const std::string& name) {
  return bad_input_message(name, {"tests/tools/bad/" + name});
}

}  // namespace

TEST_CASE("an unknown top-level key is an error at its line and column listing the known keys",
          "[errors]") {
  const auto out = bad_file_message("unknown_top_level_key.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_top_level_key.yaml:4:1: unknown key "
                                  "'schedular'"));
  CHECK_THAT(out, Catch::Contains("known: ") && Catch::Contains("scheduler"));
}

TEST_CASE("an unknown key inside the scheduler section is an error naming the section",
          "[errors]") {
  const auto out = bad_file_message("unknown_scheduler_key.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_scheduler_key.yaml:6:3: unknown key "
                                  "'chunk_sise' in scheduler"));
  CHECK_THAT(out, Catch::Contains("chunk_size"));
}

TEST_CASE("an unknown scheduler kind is an error listing the known kinds", "[errors]") {
  const auto out = bad_file_message("unknown_scheduler_kind.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_scheduler_kind.yaml:4:19:"));
  CHECK_THAT(
      out,
      Catch::Contains(
          "unknown scheduler 'sarathy' (did you mean 'sarathi'? known: edf, orca, sarathi, vllm"));
}

TEST_CASE("an unknown cost model kind is an error listing the known kinds", "[errors]") {
  const auto out = bad_file_message("unknown_cost_model.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_cost_model.yaml:5:20:"));
  CHECK_THAT(out,
             Catch::Contains("unknown cost model 'rooflime' (did you mean 'roofline'? known: "));
  CHECK_THAT(out, Catch::Contains("fixed") && Catch::Contains("roofline"));
}

TEST_CASE("an unknown GPU is an error listing the known GPUs", "[errors]") {
  const auto out = bad_file_message("unknown_gpu.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_gpu.yaml:3:17:"));
  CHECK_THAT(out, Catch::Contains("unknown GPU 'h900' (did you mean 'h100'? known: "));
  CHECK_THAT(out, Catch::Contains("a100-80gb") && Catch::Contains("h200"));
}

TEST_CASE("an unknown model is an error listing the known models", "[errors]") {
  const auto out = bad_file_message("unknown_model.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unknown_model.yaml:2:8:"));
  CHECK_THAT(out, Catch::Contains("unknown model 'meta-llama/Llama-9-7b-hf'"));
  CHECK_THAT(out, Catch::Contains("meta-llama/Llama-2-7b-hf"));
}

TEST_CASE("a negative qps given with --set is an error naming the --set", "[errors]") {
  const auto out = bad_input_message("negative_qps", {"tests/tools/configs/golden_fixed.yaml",
                                                      "--set", "workload.arrival.qps=-1"});
  CHECK_THAT(out, Catch::Contains("--set workload.arrival.qps=-1:"));
  CHECK_THAT(out, Catch::Contains("expected a positive number, got -1"));
}

TEST_CASE("a trace without a required column is an error naming the column", "[errors]") {
  const auto out = bad_file_message("trace_missing_column.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/missing_column.csv:1:"));
  CHECK_THAT(out, Catch::Contains("missing column 'num_decode_tokens'"));
}

TEST_CASE("a trace whose arrivals go back in time is an error at that row", "[errors]") {
  const auto out = bad_file_message("trace_unsorted.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/unsorted.csv:4:"));
  CHECK_THAT(out, Catch::Contains("'0.25'") && Catch::Contains("expected rows sorted by arrival"));
}

TEST_CASE("a NaN arrival in a trace is an error at that row", "[errors]") {
  const auto out = bad_file_message("trace_nan.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/nan.csv:3:"));
  CHECK_THAT(out, Catch::Contains("column 'arrived_at': expected") && Catch::Contains("'nan'"));
}

TEST_CASE("a word where a number belongs is an error at its line and column", "[errors]") {
  const auto out = bad_file_message("non_numeric_value.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/non_numeric_value.yaml:7:32:"));
  CHECK_THAT(out, Catch::Contains("expected a number, got 'fast'"));
}

TEST_CASE("a YAML syntax error is an error at its line and column", "[errors]") {
  const auto out = bad_file_message("yaml_syntax_error.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/yaml_syntax_error.yaml:4:10:"));
  CHECK_THAT(out, Catch::Contains("end of map flow not found (expected '}' to close the {…} map"));
}

TEST_CASE("a misspelt key, kind or GPU suggests the name meant", "[errors]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  const auto key = bad_input_message("typo_key", {config, "--set", "scheduler.max_num_seq=64"});
  CHECK_THAT(key, Catch::Contains("unknown key 'max_num_seq' in scheduler (did you mean "
                                  "'max_num_seqs'? known: "));
  const auto kind = bad_input_message("typo_kind", {config, "--set", "scheduler.kind=sarathy"});
  CHECK_THAT(kind, Catch::Contains("unknown scheduler 'sarathy' (did you mean 'sarathi'? known: "
                                   "edf, orca, sarathi, vllm)"));
  const auto gpu = bad_input_message("typo_gpu", {config, "--set", "replicas.0.gpu=a100-80gbb"});
  CHECK_THAT(gpu, Catch::Contains("unknown GPU 'a100-80gbb' (did you mean 'a100-80gb'? known: "));
  const auto model =
      bad_input_message("typo_model", {config, "--set", "model=meta-llama/Llama-2-7b-hg"});
  CHECK_THAT(model, Catch::Contains("(did you mean 'meta-llama/Llama-2-7b-hf'? expected"));
  // Nothing close: no guess.
  const auto far = bad_input_message("typo_far", {config, "--set", "scheduler.kind=fifo"});
  CHECK_THAT(far, Catch::Contains("unknown scheduler 'fifo' (known: edf, orca, sarathi, vllm)"));
}

TEST_CASE("a trace that cannot be opened names the path written and where it led", "[errors]") {
  const auto out = bad_input_message(
      "trace_path", {"configs/h200_sarathi.yaml", "--set", "workload.lengths.file=../no/x.csv"});
  CHECK_THAT(out, Catch::Contains("'../no/x.csv', which resolves to '" +
                                  (source_root() / "no/x.csv").string() + "': no such file"));
  CHECK_THAT(out, Catch::Contains("taken from the config's folder"));
}

TEST_CASE("a folder given as the config is an error saying so", "[errors]") {
  const auto out = bad_input_message("config_folder", {"tests/tools/bad"});
  CHECK_THAT(out, Catch::Contains("tests/tools/bad: is a folder (expected a YAML file)"));
  const auto missing = bad_input_message("config_missing", {"tests/tools/bad/no_such.yaml"});
  CHECK_THAT(missing,
             Catch::Contains("tests/tools/bad/no_such.yaml: no such file (expected a YAML file)"));
}

TEST_CASE("a bad input writes no summary.json", "[errors]") {
  const auto dir = fresh_dir("bad_input_no_outputs");
  const auto r = run_simulate({"tests/tools/bad/unknown_gpu.yaml", "--out", dir.string()});
  CHECK(r.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "summary.json"));
}

TEST_CASE("simulate without a config is a usage error", "[usage]") {
  const auto r = run_simulate({});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("config"));
}

TEST_CASE("simulate with an unknown flag is a usage error naming the flag", "[usage]") {
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--bogus"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--bogus"));
}

TEST_CASE("simulate --help exits 0 and lists its options", "[usage]") {
  const auto r = run_simulate({"--help"});
  INFO(r.output);
  CHECK(r.exit_code == 0);
  for (const char* flag : {"--set", "--out", "--seed", "--quiet"}) {
    CHECK_THAT(r.output, Catch::Contains(flag));
  }
}

// CLI11 2.1 would convert "-1" to an unsigned seed by wrapping; simulate checks the sign.
// A seed past 2^64 − 1 saturated silently before the check was ours.
TEST_CASE("a negative or too large --seed is a usage error", "[usage]") {
  const auto dir = fresh_dir("negative_seed");
  for (const std::string seed : {"-1", "99999999999999999999999", "1e3"}) {
    const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--seed", seed, "--out",
                                 dir.string(), "--quiet"});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--seed: '" + seed +
                                         "' is not a whole number in [0, 18446744073709551615]"));
  }
}

// CLI::Range compares, and every comparison with nan is false: nan passed and ran unscaled.
TEST_CASE("a real-valued option that is not a finite number in range is a usage error", "[usage]") {
  const auto dir = fresh_dir("sensitivity_nan");
  for (const std::string pct : {"nan", "inf", "-1", "51", "2x"}) {
    const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--sensitivity", pct,
                                 "--out", dir.string(), "--quiet"});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output,
               Catch::Contains("--sensitivity: '" + pct + "' is not a number in [0, 50]"));
  }
  CHECK_FALSE(std::filesystem::exists(dir / "summary.json"));
}

// yaml-cpp keeps both pairs of a duplicated key and lookups find the first; ConfigNode rejects
// the second occurrence.
TEST_CASE("a key given twice is an error at its second occurrence", "[errors]") {
  const auto out = bad_file_message("duplicate_key.yaml");
  CHECK_THAT(out, Catch::Contains("tests/tools/bad/duplicate_key.yaml:6:1:") &&
                      Catch::Contains("workload"));
}

TEST_CASE("max_model_len longer than a replica's model context is refused", "[errors]") {
  const auto out = bad_input_message("max_model_len", {"tests/tools/configs/golden_fixed.yaml",
                                                       "--set", "scheduler.max_model_len=16384"});
  CHECK_THAT(out, Catch::Contains("--set scheduler.max_model_len=16384") &&
                      Catch::Contains("16384 is longer than meta-llama/Llama-2-7b-hf's context "
                                      "(4096 tokens"));
}

TEST_CASE("a token budget below max_num_seqs is refused as vLLM refuses it", "[errors]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  const auto given = bad_input_message("budget_seqs", {config, "--set", "scheduler.chunk_size=4",
                                                       "--set", "scheduler.max_num_seqs=8"});
  CHECK_THAT(given, Catch::Contains("--set scheduler.chunk_size=4: scheduler.chunk_size: "
                                    "chunk_size (4) must be ≥ max_num_seqs (8)"));
  // The sarathi default budget (512) against 1024 seats.
  const auto deflt = bad_input_message(
      "budget_default", {config, "--set", "scheduler={kind: sarathi, max_num_seqs: 1024}"});
  CHECK_THAT(deflt, Catch::Contains("max_num_batched_tokens (512, the kind's default) must be ≥ "
                                    "max_num_seqs (1024)"));
}

TEST_CASE("a model that leaves no room for KV says what takes the memory", "[errors]") {
  // Llama-3.1-8B's 15 GiB of weights fit 24 GiB × 0.66 = 15.8 GiB, the activations do not.
  const auto out = bad_input_message(
      "no_kv_room",
      {"tests/tools/configs/golden_fixed.yaml", "--set", "replicas.0.gpu=rtx-4090", "--set",
       "scheduler={kind: sarathi, gpu_memory_utilization: 0.66, max_model_len: 4096}", "--set",
       "model=meta-llama/Llama-3.1-8B"});
  CHECK_THAT(out, Catch::Contains("meta-llama/Llama-3.1-8B does not fit on 1 × rtx-4090 (tp 1, "
                                  "pp 1): weights 15.0 GiB + activations") &&
                      Catch::Contains("leave no room for one KV block in 24.0 GiB × utilization "
                                      "0.66"));
  // Pipelined, the message names the stage that does not fit (the last: LM head and logits).
  const auto staged =
      bad_input_message("no_kv_room_pp", {"tests/tools/configs/golden_fixed.yaml", "--set",
                                          "replicas.0.gpu=rtx-4090", "--set", "replicas.0.pp=2",
                                          "--set", "scheduler={kind: sarathi, max_model_len: 4096}",
                                          "--set", "model=meta-llama/Llama-2-70b-hf"});
  CHECK_THAT(staged,
             Catch::Contains("does not fit on 2 × rtx-4090 (tp 1, pp 2): weights 64.2 GiB") &&
                 Catch::Contains("per GPU of pipeline stage 2 of 2 leave no room"));
}

TEST_CASE("a KV cache smaller than one max_model_len request is refused as vLLM refuses it",
          "[errors]") {
  // 100 blocks of 16 = 1600 tokens, against Llama-2-7b's 4096.
  const auto out = bad_input_message("kv_below_len", {"tests/tools/configs/golden_fixed.yaml",
                                                      "--set", "scheduler.num_gpu_blocks=100"});
  CHECK_THAT(out, Catch::Contains("max_model_len 4096 does not fit meta-llama/Llama-2-7b-hf's KV "
                                  "cache on 1 × a100-80gb (100 blocks of 16 = 1600 tokens)"));
  const auto dir = fresh_dir("kv_below_len_ok");
  const auto ok = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--set",
                                "scheduler.num_gpu_blocks=100", "--set",
                                "scheduler.max_model_len=1600", "--out", dir.string(), "--quiet"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("an unknown scheduler kind is named before any budget check", "[errors]") {
  const auto out = bad_input_message(
      "scheduler_kind", {"tests/tools/configs/golden_fixed.yaml", "--set", "scheduler.kind=lifo"});
  CHECK_THAT(out, Catch::Contains("unknown scheduler 'lifo' (known: edf, orca, sarathi, vllm)"));
}

TEST_CASE("a replica's CUDA-graph settings are checked: a known mode, a positive capture size",
          "[errors]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  const auto mode =
      bad_input_message("cuda_graph_mode", {config, "--set", "replicas.0.cuda_graph_mode=full"});
  CHECK_THAT(mode, Catch::Contains("replicas[0].cuda_graph_mode: unknown cuda_graph_mode 'full' "
                                   "(known: decode_only, piecewise)"));
  const auto size = bad_input_message("cuda_graph_max_tokens",
                                      {config, "--set", "replicas.0.cuda_graph_max_tokens=0"});
  // The error names the --set flag that gave the value, not a position in the file.
  CHECK_THAT(size, Catch::Contains("error: --set replicas.0.cuda_graph_max_tokens=0: "
                                   "replicas[0].cuda_graph_max_tokens: expected a positive "
                                   "integer ≤ 2147483647, got 0"));
}

TEST_CASE("more pipeline stages than layers, or a power cap outside the board's limits, is refused",
          "[errors]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  const auto pp = bad_input_message("pp_layers", {config, "--set", "replicas.0.pp=64"});
  CHECK_THAT(pp, Catch::Contains("--set replicas.0.pp=64") &&
                     Catch::Contains("64 pipeline stages exceed the 32 layers of "
                                     "meta-llama/Llama-2-7b-hf (expected 1 to 32)"));
  // The A100-80GB file: min_power_w 100, tdp_w 400.
  for (const std::string watts : {"5", "5000"}) {
    const auto cap = bad_input_message("power_cap_" + watts,
                                       {config, "--set", "replicas.0.power_cap_w=" + watts});
    CHECK_THAT(cap, Catch::Contains("power_cap_w: " + watts +
                                    " W is outside a100-80gb's power limits (expected 100 to "
                                    "400 W)"));
  }
  // A cap only the analytical model prices: the fixed model would ignore it.
  const auto ignored =
      bad_input_message("power_cap_fixed", {config, "--set", "replicas.0.power_cap_w=300"});
  CHECK_THAT(ignored, Catch::Contains("power_cap_w: the fixed cost model does not price power "
                                      "caps (expected cost_model kind analytical, or no cap)"));
  const auto dir = fresh_dir("power_cap_ok");
  const auto ok =
      run_simulate({config, "--set", "replicas.0.power_cap_w=300", "--set", "replicas.0.pp=2",
                    "--set", "cost_model={kind: analytical}", "--out", dir.string(), "--quiet"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("an NVLink topology on a GPU without NVLink is refused and its default is PCIe",
          "[errors]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  for (const std::string kind : {"nvlink", "pairwise_nvlink"}) {
    const auto msg = bad_input_message(
        "topology_" + kind,
        {config, "--set", "replicas.0.gpu=l40s", "--set", "replicas.0.topology=" + kind});
    CHECK_THAT(msg, Catch::Contains("replicas[0].topology: l40s has no NVLink (its hardware file "
                                    "gives no nvlink_gb_per_s); expected topology pcie"));
  }
  const auto empty =
      bad_input_message("topology_empty", {config, "--set", "replicas.0.topology=''"});
  CHECK_THAT(empty, Catch::Contains("replicas[0].topology: expected nvlink, pairwise_nvlink or "
                                    "pcie, got an empty value"));
  const auto unknown =
      bad_input_message("topology_unknown", {config, "--set", "replicas.0.topology=mesh"});
  CHECK_THAT(unknown, Catch::Contains("unknown topology 'mesh' (known: nvlink, pairwise_nvlink, "
                                      "pcie)"));
  // A40 cards are joined in pairs by an NVLink bridge: all-to-all NVLink is refused.
  const auto bridge = bad_input_message(
      "topology_bridge", {config, "--set", "replicas.0.gpu=a40", "--set", "replicas.0.tp=4",
                          "--set", "replicas.0.topology=nvlink"});
  CHECK_THAT(bridge, Catch::Contains("replicas[0].topology: a40 links only pairs of cards, through "
                                     "an NVLink bridge") &&
                         Catch::Contains("expected topology pairwise_nvlink or pcie"));
  // Without a topology key each replica reports the links its GPU has.
  for (const auto& [gpu, links] : std::vector<std::pair<std::string, std::string>>{
           {"l40s", "pcie"}, {"a100-80gb", "nvlink"}, {"a40", "pairwise_nvlink"}}) {
    const auto dir = fresh_dir("topology_default_" + gpu);
    const auto r =
        run_simulate({config, "--set", "replicas.0.gpu=" + gpu, "--out", dir.string(), "--quiet"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(read_json(dir / "summary.json")["replicas"][0]["topology"] == links);
  }
}

TEST_CASE("sim2real refuses an empty run id and an --out that is a file", "[errors][sim2real]") {
  const std::string csv = (source_root() / "data/sim2real/experiments.csv").string();
  REQUIRE(std::filesystem::exists(csv));
  for (const std::string ids : {",", "1,,4", "1,"}) {
    const auto r = run_sim2real({"--experiments", csv, "--only", ids, "--sensitivity", "0"});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("--only: empty run id in '" + ids +
                                         "' (expected comma-separated run ids)"));
  }
  const auto file = fresh_dir("sim2real_out_file") / "a_file";
  { std::ofstream(file) << "x\n"; }
  const auto r = run_sim2real(
      {"--experiments", csv, "--only", "1", "--sensitivity", "0", "--out", file.string()});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("--out: cannot create the folder '" + file.string() + "'"));
}

}  // namespace servesim::test
