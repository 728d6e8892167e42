// KV offload to a CPU tier end to end: `simulate` with a `kv_offload:` section against the same
// config without it (swap instead of recompute under memory pressure), its summary, byte
// accounting, determinism, the prefix tier on a Mooncake slice, and its bad inputs.
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/tools/bad_input.hpp"
#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOffload = "tests/tools/configs/kv_offload.yaml";

// The config without its `kv_offload:` section, written to a fresh folder.
std::string config_without_offload() {
  const std::string text = read_text(source_root() / kOffload);
  const auto dir = fresh_dir("kv_offload_plain_config");
  const fs::path path = dir / "plain.yaml";
  std::ofstream(path) << text.substr(0, text.find("\nkv_offload:") + 1);
  return path.string();
}

// What the tier holds at the end balances what moved through it.
void check_offload_balance(const nlohmann::json& k) {
  const auto stored = k["stored_blocks"].get<long long>();
  const auto dropped = k["dropped_blocks"].get<long long>();
  const auto swapped_in = k["swapped_in_blocks"].get<long long>();
  CHECK(stored - dropped - swapped_in == k["resident_blocks"].get<long long>());
  const double to = k["bytes_to_cpu"].get<double>();
  CHECK(to - k["bytes_dropped"].get<double>() -
            (swapped_in > 0 ? to * static_cast<double>(swapped_in) / static_cast<double>(stored)
                            : 0.0) ==
        Approx(k["bytes_resident"].get<double>()).margin(1));
  CHECK(k["peak_cpu_bytes"].get<double>() <= k["cpu_capacity_bytes"].get<double>());
}

double offload_ttft_mean(const nlohmann::json& s) {
  return s["latency_ms"]["ttft"]["mean"].get<double>();
}

}  // namespace

TEST_CASE("under memory pressure a fast CPU tier swaps instead of recomputing and is no slower",
          "[kv_offload]") {
  const auto plain = read_json(run_ok("kvoff_plain", {config_without_offload()}) / "summary.json");
  CHECK_FALSE(plain.contains("kv_offload"));
  REQUIRE(plain["requests"]["preemptions"].get<long long>() > 0);
  const auto s = read_json(
      run_ok("kvoff_fast", {kOffload, "--set", "kv_offload.link_gb_per_s=1000"}) / "summary.json");
  REQUIRE(s.contains("kv_offload"));
  const auto& k = s["kv_offload"];
  CHECK(s["requests"]["finished"] == s["requests"]["arrived"]);
  CHECK(s["requests"]["preemptions"].get<long long>() > 0);
  CHECK(k["swaps_out"].get<long long>() > 0);
  CHECK(k["swaps_in"] == k["swaps_out"]);
  CHECK(k["recomputes"] == 0);
  CHECK(k["cpu_hit_blocks"] == 0);  // no prefix caching: no prefix tier
  CHECK(k["bytes_from_cpu"].get<double>() == k["bytes_to_cpu"].get<double>());
  CHECK(k["resident_blocks"] == 0);
  check_offload_balance(k);
  // One Llama-3.1-8B block: 16 tokens × 32 layers × 8 KV heads × 128 × K and V × 2 bytes.
  CHECK(k["bytes_to_cpu"].get<double>() ==
        static_cast<double>(k["stored_blocks"].get<long long>()) * 2097152.0);
  CHECK(s["makespan_s"].get<double>() <= plain["makespan_s"].get<double>());
  CHECK(offload_ttft_mean(s) < offload_ttft_mean(plain));
}

TEST_CASE("a slow CPU link costs step time and overlap hides part of it", "[kv_offload]") {
  const auto fast =
      read_json(run_ok("kvoff_link_fast", {kOffload, "--set", "kv_offload.link_gb_per_s=1000"}) /
                "summary.json");
  const auto slow =
      read_json(run_ok("kvoff_link_slow", {kOffload, "--set", "kv_offload.link_gb_per_s=1"}) /
                "summary.json");
  const auto overlap =
      read_json(run_ok("kvoff_link_overlap", {kOffload, "--set", "kv_offload.link_gb_per_s=1",
                                              "--set", "kv_offload.overlap=true"}) /
                "summary.json");
  // 1 GB/s: each swapped-in block of 2 MiB costs 2.1 ms of the step that loads it.
  CHECK(slow["kv_offload"]["load_s"].get<double>() > fast["kv_offload"]["load_s"].get<double>());
  CHECK(slow["kv_offload"]["load_s"].get<double>() ==
        Approx(slow["kv_offload"]["bytes_from_cpu"].get<double>() / 1e9).epsilon(1e-6));
  CHECK(slow["makespan_s"].get<double>() > fast["makespan_s"].get<double>());
  CHECK(overlap["latency_ms"]["e2e"]["mean"].get<double>() <
        slow["latency_ms"]["e2e"]["mean"].get<double>());
  CHECK(slow["kv_offload"]["store_link_busy_fraction"].get<double>() >
        fast["kv_offload"]["store_link_busy_fraction"].get<double>());
}

TEST_CASE("a CPU tier too small for any swap falls back to recompute with the same results",
          "[kv_offload]") {
  const auto plain_dir = run_ok("kvoff_tiny_plain", {config_without_offload()});
  const auto dir = run_ok("kvoff_tiny", {kOffload, "--set", "kv_offload.cpu_gib=0.001"});
  const auto s = read_json(dir / "summary.json");
  const auto plain = read_json(plain_dir / "summary.json");
  CHECK(s["kv_offload"]["swaps_out"] == 0);
  CHECK(s["kv_offload"]["recomputes"].get<long long>() > 0);
  CHECK(s["requests"]["preemptions"] == plain["requests"]["preemptions"]);
  CHECK(read_text(dir / "requests.csv") == read_text(plain_dir / "requests.csv"));
}

TEST_CASE("a KV offload run is byte-identical for its seed", "[kv_offload]") {
  const auto a = run_ok("kvoff_det_a", {kOffload});
  const auto b = run_ok("kvoff_det_b", {kOffload});
  CHECK(read_text(a / "requests.csv") == read_text(b / "requests.csv"));
  CHECK(read_json(a / "summary.json")["kv_offload"] == read_json(b / "summary.json")["kv_offload"]);
}

TEST_CASE("with prefix caching the CPU tier serves prefix hits the GPU evicted", "[kv_offload]") {
  // The first 300 requests of the Mooncake conversation trace on a GPU cache of 8,192 blocks.
  const std::vector<std::string> common{"configs/experiments/mooncake_prefix.yaml",
                                        "--set",
                                        "replicas.0.count=1",
                                        "--set",
                                        "workload.num_requests=300",
                                        "--set",
                                        "scheduler.num_gpu_blocks=8192",
                                        "--set",
                                        "router.kind=round_robin"};
  auto with = common;
  with.insert(with.end(), {"--set", "kv_offload={cpu_gib: 64}"});
  const auto gpu = read_json(run_ok("kvoff_mooncake_gpu", common) / "summary.json");
  const auto both = read_json(run_ok("kvoff_mooncake_cpu", with) / "summary.json");
  const auto& k = both["kv_offload"];
  CHECK(both["requests"]["finished"] == 300);
  CHECK(k["cpu_hit_blocks"].get<long long>() > 0);
  CHECK(k["loaded_blocks"] == k["cpu_hit_blocks"]);
  CHECK(k["swaps_out"] == 0);
  check_offload_balance(k);
  // The GPU tier finds what it found alone at most; the CPU tier adds to it.
  CHECK(both["prefix_cache"]["hit_blocks"].get<long long>() >
        gpu["prefix_cache"]["hit_blocks"].get<long long>());
  CHECK(offload_ttft_mean(both) < offload_ttft_mean(gpu));
}

TEST_CASE("bad kv_offload input is an error naming where it is", "[kv_offload][errors]") {
  CHECK_THAT(bad_input_message("kvoff_gib0", {kOffload, "--set", "kv_offload.cpu_gib=0"}),
             Catch::Contains("kv_offload.cpu_gib") && Catch::Contains("expected a positive"));
  CHECK_THAT(bad_input_message("kvoff_gib_big", {kOffload, "--set", "kv_offload.cpu_gib=1e9"}),
             Catch::Contains("kv_offload.cpu_gib") && Catch::Contains("at most 65536"));
  CHECK_THAT(bad_input_message("kvoff_link", {kOffload, "--set", "kv_offload.link_gb_per_s=-3"}),
             Catch::Contains("kv_offload.link_gb_per_s") && Catch::Contains("expected a positive"));
  CHECK_THAT(
      bad_input_message("kvoff_link_big", {kOffload, "--set", "kv_offload.link_gb_per_s=1e6"}),
      Catch::Contains("kv_offload.link_gb_per_s") && Catch::Contains("at most 10000"));
  CHECK_THAT(bad_input_message("kvoff_overlap", {kOffload, "--set", "kv_offload.overlap=maybe"}),
             Catch::Contains("kv_offload.overlap"));
  CHECK_THAT(bad_input_message("kvoff_unknown", {kOffload, "--set", "kv_offload.cpu_gb=4"}),
             Catch::Contains("kv_offload") && Catch::Contains("cpu_gb"));
  CHECK_THAT(
      bad_input_message("kvoff_missing", {"tests/tools/bad/kv_offload_no_cpu_gib.yaml"}),
      Catch::Contains("tests/tools/bad/kv_offload_no_cpu_gib.yaml:") && Catch::Contains("cpu_gib"));
}

TEST_CASE("a drafter's KV moves with its block to the CPU tier", "[kv_offload][speculative]") {
  const auto block_bytes = [](const fs::path& dir) {
    const auto k = read_json(dir / "summary.json")["kv_offload"];
    REQUIRE(k["stored_blocks"].get<double>() > 0);
    return k["bytes_to_cpu"].get<double>() / k["stored_blocks"].get<double>();
  };
  const double plain = block_bytes(run_ok("kv_offload_block_plain", {kOffload}));
  const double drafted =
      block_bytes(run_ok("kv_offload_block_draft",
                         {kOffload, "--set",
                          "speculative={method: draft, draft_model: meta-llama/Llama-3.2-1B, "
                          "num_speculative_tokens: 3, acceptance_rate: 0.6}"}));
  // Llama-3.2-1B's 16 layers of 8 × 64 KV heads beside Llama-3.1-8B's 32 of 8 × 128: a quarter
  // more bytes per block.
  CHECK(drafted / plain == Approx(1.25));
}

}  // namespace servesim::test
