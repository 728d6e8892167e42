#include "tools/sim2real/kv_offload_replay.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "run/run_builder.hpp"
#include "run/simulation.hpp"
#include "sim/config/run_config.hpp"
#include "sim/engine/kv_offload.hpp"
#include "tests/sim2real/experiments_data.hpp"
#include "tools/sim2real/replay.hpp"

using namespace servesim;
using namespace servesim::sim2real;

namespace {

constexpr double kOffloadGib = 1024.0 * 1024.0 * 1024.0;

// A small regenerated run, served with or without `--kv-offloading-size`.
Experiment small_offload_run(std::optional<bool> offload, const std::string& detail) {
  Experiment e = test::synthetic_run("offload", "meta-llama/Llama-2-7b-hf");
  e.cpu_kv_offload = offload;
  e.columns["cpu_kv_offload_detail"] = detail;
  return e;
}

RunConfig offload_config_of(const Experiment& e) {
  return RunConfig::parse(ConfigNode::parse(make_config_yaml(e, ReplayOptions{}), "generated"));
}

bool has_memory_note(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("a run served with --kv-offloading-size replays with a CPU tier of that many GiB",
          "[sim2real][replay][kv_offload]") {
  const Experiment on =
      small_offload_run(true, "--kv-offloading-size=12.5 GiB + --disable-hybrid-kv-cache-manager");
  REQUIRE(kv_offloading_gib(on) == 12.5);
  const RunConfig c = offload_config_of(on);
  REQUIRE(c.kv_offload);
  CHECK(c.kv_offload->cpu_gib == 12.5);
  CHECK(c.kv_offload->overlap);
  CHECK_FALSE(c.kv_offload->link_gb_per_s);  // the hardware file's pcie_gb_per_s
  CHECK(has_memory_note(memory_notes(on), "KV offload: 12.5 GiB CPU tier"));
  CHECK_FALSE(has_memory_note(memory_notes(on), "is not modelled"));

  SECTION("a run served without it, or with an unknown flag, replays without one") {
    for (const std::optional<bool> flag : {std::optional<bool>(false), std::optional<bool>()}) {
      const Experiment off = small_offload_run(flag, "");
      CHECK_FALSE(kv_offloading_gib(off));
      CHECK_FALSE(offload_config_of(off).kv_offload);
      CHECK_FALSE(has_memory_note(memory_notes(off), "KV offload"));
    }
    CHECK(has_memory_note(memory_notes(small_offload_run(std::nullopt, "")),
                          "cpu_kv_offload unknown"));
  }
  SECTION("an offloading run whose detail names no size is replayed without a tier and says so") {
    const Experiment unsized = small_offload_run(true, "--kv-offloading-backend native");
    CHECK_FALSE(kv_offloading_gib(unsized));
    CHECK_FALSE(offload_config_of(unsized).kv_offload);
    CHECK(has_memory_note(memory_notes(unsized), "KV offload to CPU is not modelled"));
    CHECK_FALSE(kv_offloading_gib(small_offload_run(true, "--kv-offloading-size=0 GiB")));
  }
}

TEST_CASE("the measured offloading runs get 8 GiB per vLLM instance, over all its TP ranks",
          "[sim2real][replay][kv_offload][data]") {
  const std::string csv = test::experiments_csv();
  const std::vector<Experiment> runs = read_experiments(csv);
  int offloading = 0;
  for (const auto& e : runs) {
    INFO(e.id);
    const RunConfig c = offload_config_of(e);
    CHECK(c.kv_offload.has_value() == e.cpu_kv_offload.value_or(false));
    if (!c.kv_offload) continue;
    ++offloading;
    CHECK(c.kv_offload->cpu_gib == 8);
    // The tier holds 8 GiB of whole blocks, each block counted over all of the replica's GPUs:
    // the size is the instance's total, not each rank's.
    const BuiltRun run = build_run(c);
    const KvOffload* tier = run.fleet.at(0)->kv.offload();
    REQUIRE(tier != nullptr);
    const double bytes = static_cast<double>(tier->capacity_blocks()) * tier->block_bytes();
    CHECK(bytes <= 8 * kOffloadGib);
    CHECK(bytes > 8 * kOffloadGib - tier->block_bytes());
  }
  CHECK(offloading == 8);  // 48, 66, 67 (trainval13); 1, 4, 5, 8, 12 (extra_trace_only)
}

TEST_CASE("a replay notes what of the served memory it does not reproduce",
          "[sim2real][replay][kv_offload][data]") {
  const std::string csv = test::experiments_csv();
  const std::vector<Experiment> runs = read_experiments(csv);
  // Run 67's notes say gpu_memory_utilization was reduced to 0.75; its gpu_mem_util column, the
  // value the replay uses, says 0.9, and no measured block count overrides it.
  const Experiment& e67 = test::find_run(runs, "67");
  REQUIRE(e67.gpu_mem_util == 0.9);
  const std::vector<std::string> notes = memory_notes(e67);
  CHECK(has_memory_note(notes,
                        "the csv notes say 0.75, the replay uses the gpu_mem_util column (0.9)"));
  CHECK(has_memory_note(notes, "may be larger than the one served"));
  CHECK_FALSE(has_memory_note(notes, "is not modelled"));
  CHECK_FALSE(has_memory_note(memory_notes(test::find_run(runs, "48")), "gpu_memory_utilization"));

  // The tier is used: Llama-2-7b's GPU cache evicts system prompts that come back from the CPU.
  Simulation sim(offload_config_of(e67));
  sim.run();
  const KvOffload* tier = sim.fleet().at(0)->kv.offload();
  REQUIRE(tier != nullptr);
  CHECK(tier->stored_blocks() > 0);
  CHECK(tier->cpu_hit_blocks() > 0);
}
