// The files `simulate` writes: their presence and format, the stable keys of summary.json,
// byte-identical reruns for one seed, and --set overrides reaching the run.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/output/chrome_trace_writer.hpp"
#include "tests/tools/run_ok.hpp"
#include "tests/tools/tool_runner.hpp"

namespace servesim::test {
namespace fs = std::filesystem;
namespace {

void require_stats(const nlohmann::json& m) {
  for (const char* k : {"mean", "p50", "p90", "p95", "p99", "max"}) {
    INFO(k);
    REQUIRE(m.contains(k));
    CHECK(m[k].is_number());
  }
}

long long max_prefill_tokens(const fs::path& steps_csv) {
  const CsvTable steps(steps_csv);
  long long most = 0;
  for (std::size_t i = 0; i < steps.rows().size(); ++i) {
    most = std::max(most, steps.integer(i, "prefill_tokens"));
  }
  return most;
}

}  // namespace

TEST_CASE("the same config and seed give byte-identical output files", "[determinism]") {
  const auto a = run_ok("determinism_a", {kSeeded});
  const auto b = run_ok("determinism_b", {kSeeded});
  for (const char* f :
       {"summary.json", "requests.h5", "steps.h5", "trace.json", "requests.csv", "steps.csv"}) {
    INFO(f);
    REQUIRE(fs::exists(a / f));
    CHECK(read_text(a / f) == read_text(b / f));
  }
}

TEST_CASE("a different --seed gives different requests", "[determinism]") {
  const auto a = run_ok("seed_7", {kSeeded});
  const auto b = run_ok("seed_8", {kSeeded, "--seed", "8"});
  CHECK(read_text(a / "requests.csv") != read_text(b / "requests.csv"));
  CHECK(read_json(a / "summary.json")["seed"] == 7);
  CHECK(read_json(b / "summary.json")["seed"] == 8);
}

TEST_CASE("summary.json has the documented stable keys", "[outputs]") {
  const auto dir = run_ok("summary_keys", {kSeeded});
  const auto j = read_json(dir / "summary.json");
  // tools/README.md "Metrics (summary.json)": stable top-level keys.
  for (const char* k :
       {"name", "seed", "servesim_version", "config", "inputs", "cost_model", "workload",
        "requests", "makespan_s", "steps", "throughput", "latency_ms", "percentiles_exact", "slo",
        "replicas", "energy_j", "energy_j_per_output_token", "outputs"}) {
    INFO(k);
    CHECK(j.contains(k));
  }
  CHECK(j["name"] == "seeded");
  CHECK(j["cost_model"] == "roofline");
  CHECK(j["percentiles_exact"] == true);
  const auto& req = j.at("requests");
  for (const char* k : {"arrived", "finished", "rejected", "preemptions", "preempted_requests",
                        "prompt_tokens", "output_tokens"}) {
    INFO(k);
    CHECK(req.at(k).is_number_integer());
  }
  CHECK(req["arrived"] == 200);
  CHECK(req["arrived"].get<long long>() ==
        req["finished"].get<long long>() + req["rejected"].get<long long>());
  CHECK(j.at("makespan_s").get<double>() > 0);
  CHECK(j.at("throughput").at("requests_per_s").get<double>() > 0);
  CHECK(j.at("throughput").at("output_tokens_per_s").get<double>() > 0);
  CHECK(j.at("throughput").at("prefill_tokens_per_s").get<double>() > 0);
  for (const char* k : {"ttft", "tbt", "tpot", "e2e", "scheduling_delay"}) {
    INFO(k);
    require_stats(j.at("latency_ms").at(k));
  }
  // Every finished request has a TTFT and an E2E.
  CHECK(j["latency_ms"]["ttft"]["count"] == req["finished"]);
  CHECK(j["latency_ms"]["e2e"]["count"] == req["finished"]);
  // seeded.yaml sets an SLO; the object carries attainment and goodput.
  const auto& slo = j.at("slo");
  REQUIRE(slo.is_object());
  CHECK(slo.at("attainment").get<double>() >= 0);
  CHECK(slo.at("attainment").get<double>() <= 1);
  CHECK(slo.at("goodput_requests_per_s").is_number());
  CHECK(slo.at("met").is_number_integer());
  REQUIRE(j.at("replicas").size() == 2);
  for (const auto& r : j["replicas"]) {
    for (const char* k :
         {"id", "gpu", "model", "tp", "pp", "power_cap_w", "scheduler", "token_budget",
          "max_model_len", "block_size", "kv_blocks", "steps", "energy_j"}) {
      INFO(k);
      CHECK(r.contains(k));
    }
    CHECK(r.at("busy_fraction").get<double>() > 0);
    CHECK(r.at("busy_fraction").get<double>() <= 1);
  }
  // outputs.files names exactly the files in the folder.
  std::vector<std::string> listed = j.at("outputs").at("files").get<std::vector<std::string>>();
  std::vector<std::string> present;
  for (const auto& e : fs::directory_iterator(dir)) present.push_back(e.path().filename().string());
  std::sort(listed.begin(), listed.end());
  std::sort(present.begin(), present.end());
  CHECK(listed == present);
  CHECK(j["outputs"].at("notes").is_array());
}

namespace {
// FNV-1a 64 of a file, as 16 hex digits: written again here so the test does not trust the code
// it checks.
std::string fnv1a64_hex(const fs::path& p) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : read_text(p)) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

TEST_CASE("summary.json records its resolved config, version and hashed inputs", "[outputs]") {
  const auto dir =
      run_ok("summary_inputs", {kSeeded, "--set", "scheduler.chunk_size=256", "--seed", "9"});
  const auto j = read_json(dir / "summary.json");
  CHECK(j["config"]["scheduler"]["chunk_size"] == 256);  // after --set
  CHECK(j["config"]["seed"] == 9);                       // after --seed
  CHECK(j["config"]["name"] == "seeded");                // the default, written in
  CHECK(j["config"]["config_dir"] == (source_root() / "tests/tools/configs").string());
  CHECK(j["servesim_version"].get<std::string>().rfind("0.1", 0) == 0);
  REQUIRE(j["inputs"].size() == 2);  // one GPU kind, one model; no trace file
  CHECK(j["inputs"][0]["kind"] == "hardware");
  CHECK(j["inputs"][0]["file"] == (source_root() / "configs/hardware/a100-80gb.yaml").string());
  CHECK(j["inputs"][1]["kind"] == "model");
  for (const auto& f : j["inputs"]) {
    INFO(f.dump());
    CHECK(f["fnv1a64"] == fnv1a64_hex(f["file"].get<std::string>()));
  }
  // The percentiles include p95, between p90 and p99.
  const auto& e2e = j["latency_ms"]["e2e"];
  CHECK(e2e["p95"].get<double>() >= e2e["p90"].get<double>());
  CHECK(e2e["p95"].get<double>() <= e2e["p99"].get<double>());
  // HDF5 files carry the same version.
  if (std::system("command -v h5dump > /dev/null 2>&1") == 0) {
    const auto listing = dir / "attrs.txt";
    const std::string cmd = "h5dump -a /servesim_version '" + (dir / "steps.h5").string() +
                            "' > '" + listing.string() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK_THAT(read_text(listing), Catch::Contains(j["servesim_version"].get<std::string>()));
    fs::remove(listing);
  }
}

TEST_CASE("a run says where the constants pricing each GPU come from", "[outputs]") {
  // roofline uses no fitted constants: nothing to say.
  CHECK(read_json(run_ok("provenance_roofline", {kSeeded}) / "summary.json")["provenance"].empty());
  const auto dir = fresh_dir("provenance_analytical");
  const auto r = run_simulate({kSeeded, "--set", "cost_model={kind: analytical}", "--set",
                               "replicas=[{gpu: l40s, count: 1}, {gpu: h100-sxm, count: 1}]",
                               "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto p = read_json(dir / "summary.json")["provenance"];
  REQUIRE(p.size() == 2);
  CHECK(p[0]["gpu"] == "l40s");
  CHECK_THAT(p[0]["constants"].get<std::string>(),
             Catch::Contains("transferred from the a100-80gb"));
  CHECK(p[0]["validated"].empty());
  CHECK(p[1]["gpu"] == "h100-sxm");
  CHECK_THAT(p[1]["validated"][0].get<std::string>(), Catch::Contains("Vidur H100 profile"));
  CHECK_THAT(r.output, Catch::Contains("prices     l40s: transferred from the a100-80gb fit") &&
                           Catch::Contains("validated: nothing measured on this GPU"));
}

TEST_CASE("simulate --plot draws latency CDFs and timelines, and plot.py refuses a non-run folder",
          "[outputs][plot]") {
  const auto dir = fresh_dir("plots");
  const auto r = run_simulate({kSeeded, "--out", dir.string(), "--plot"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"latency.png", "timeline.png"}) {
    INFO(f);
    REQUIRE(fs::exists(dir / f));
    CHECK(fs::file_size(dir / f) > 10000);
    CHECK(read_text(dir / f).substr(0, 8) == "\x89PNG\r\n\x1a\n");
  }
  const auto svg = fresh_dir("plots_svg");
  REQUIRE(
      run_simulate({kSeeded, "--out", svg.string(), "--plot", "--plot-format", "svg", "--quiet"})
          .exit_code == 0);
  CHECK_THAT(read_text(svg / "latency.svg").substr(0, 200), Catch::Contains("<svg"));
  CHECK(run_simulate({kSeeded, "--no-outputs", "--plot"}).exit_code == 2);  // nothing to draw
  const std::string script = (source_root() / "tools" / "plot.py").string();
  const auto empty = fresh_dir("plots_not_a_run");
  const auto refused = run_command("/usr/bin/python3", {script, "run", empty.string()});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.output, Catch::Contains((empty / "summary.json").string() + ": not found"));
}

TEST_CASE("rerunning a run's config.yaml reproduces its outputs byte for byte", "[outputs]") {
  const auto a = run_ok("rerun_a", {kSeeded, "--set", "scheduler.chunk_size=1024", "--set",
                                    "workload.arrival.qps=15", "--seed", "3"});
  const auto b = fresh_dir("rerun_b");
  const auto r = run_simulate({(a / "config.yaml").string(), "--out", b.string(), "--quiet"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* f :
       {"config.yaml", "summary.json", "requests.h5", "steps.h5", "requests.csv", "trace.json"}) {
    INFO(f);
    CHECK(read_text(a / f) == read_text(b / f));
  }
}

TEST_CASE("requests.csv is in request-id order with each request's latencies as columns",
          "[outputs]") {
  const auto dir = run_ok("request_columns", {kSeeded});
  const CsvTable t(dir / "requests.csv");
  REQUIRE(t.rows().size() == 200);
  for (std::size_t i = 0; i < t.rows().size(); ++i) {
    INFO("row " << i);
    REQUIRE(t.integer(i, "id") == static_cast<long long>(i));
    const long long arrival = t.integer(i, "arrival_ns");
    CHECK(t.integer(i, "ttft_ns") == t.integer(i, "first_token_ns") - arrival);
    CHECK(t.integer(i, "e2e_ns") == t.integer(i, "finished_ns") - arrival);
    CHECK(t.integer(i, "scheduling_delay_ns") == t.integer(i, "first_scheduled_ns") - arrival);
    const long long out = t.integer(i, "output_tokens");
    const double tpot = std::stod(t.rows()[i].at("tpot_ns"));
    if (out > 1) {
      CHECK(tpot == Approx(static_cast<double>(t.integer(i, "finished_ns") -
                                               t.integer(i, "first_token_ns")) /
                           static_cast<double>(out - 1)));
      CHECK(t.integer(i, "tbt_max_ns") * (out - 1) >=
            t.integer(i, "finished_ns") - t.integer(i, "first_token_ns"));
    } else {
      CHECK(tpot == -1);
    }
  }
  // The steps carry the replica's queue after each batch was formed.
  const CsvTable steps(dir / "steps.csv");
  long long most_waiting = 0;
  for (std::size_t i = 0; i < steps.rows().size(); ++i) {
    CHECK(steps.integer(i, "running") >=
          steps.integer(i, "num_prefills") + steps.integer(i, "num_decodes"));
    most_waiting = std::max(most_waiting, steps.integer(i, "waiting"));
  }
  CHECK(most_waiting > 0);  // 20 req/s on two replicas queues at times
}

TEST_CASE("summary.json has a null slo when the config sets none", "[outputs]") {
  const auto dir = run_ok("summary_no_slo", {"tests/tools/configs/golden_fixed.yaml"});
  CHECK(read_json(dir / "summary.json").at("slo").is_null());
}

TEST_CASE("a latency statistic of no values is null in summary.json and n/a in the table",
          "[outputs]") {
  // One output token per request: no gap between tokens, so TBT and TPOT have no values.
  const auto dir = fresh_dir("no_tbt");
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--set",
                               "workload.lengths.output_tokens=1", "--out", dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto j = read_json(dir / "summary.json");
  for (const char* k : {"tbt", "tpot"}) {
    INFO(k);
    CHECK(j["latency_ms"][k]["count"] == 0);
    for (const char* stat : {"mean", "p50", "p90", "p95", "p99", "max"})
      CHECK(j["latency_ms"][k][stat].is_null());
  }
  require_stats(j["latency_ms"]["ttft"]);
  CHECK(j["energy_j"].is_null());  // no cost model prices energy yet
  CHECK_THAT(r.output, Catch::Contains(
                           "tbt                      n/a       n/a       n/a       n/a       n/a"));
}

TEST_CASE("the summary table names a replica's pipeline stages", "[outputs]") {
  const std::string config = "tests/tools/configs/golden_fixed.yaml";
  const auto two = run_simulate({config, "--set", "replicas.0.pp=2", "--no-outputs"});
  INFO(two.output);
  REQUIRE(two.exit_code == 0);
  CHECK_THAT(two.output, Catch::Contains("a100-80gb  tp1 pp2 sarathi"));
  const auto one = run_simulate({config, "--no-outputs"});
  CHECK_THAT(one.output, Catch::Contains("a100-80gb  tp1 sarathi"));
}

TEST_CASE("with prefix caching each replica reports its cache lookups and hits and evictions",
          "[outputs]") {
  // Three requests sharing a 64-token prefix (4 blocks of 16): the first computes it, the other
  // two find it.
  const auto dir = fresh_dir("prefix_counters");
  const auto r = run_simulate({"tests/tools/configs/golden_fixed.yaml", "--set",
                               "scheduler.enable_prefix_caching=true", "--set",
                               "workload.shared_prefix={num_groups: 1, prefix_tokens: 64}", "--out",
                               dir.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto p = read_json(dir / "summary.json")["replicas"][0]["prefix_cache"];
  CHECK(p["query_blocks"] == 12);
  CHECK(p["hit_blocks"] == 8);
  CHECK(p["hit_rate"].get<double>() == Approx(8.0 / 12));
  CHECK(p["evicted_blocks"] == 0);
  CHECK_THAT(r.output, Catch::Contains("prefix hits 66.7% of 12 blocks, 0 evicted"));
  // With caching on but no shared prefix nothing is looked up: no rate, not a rate of 0.
  const auto none = run_ok(
      "prefix_counters_none",
      {"tests/tools/configs/golden_fixed.yaml", "--set", "scheduler.enable_prefix_caching=true"});
  const auto q = read_json(none / "summary.json")["replicas"][0]["prefix_cache"];
  CHECK(q["query_blocks"] == 0);
  CHECK(q["hit_rate"].is_null());
  // Without prefix caching there is nothing to report.
  const auto off = run_ok("prefix_counters_off", {"tests/tools/configs/golden_fixed.yaml"});
  CHECK_FALSE(read_json(off / "summary.json")["replicas"][0].contains("prefix_cache"));
}

TEST_CASE("trace.json parses as JSON with trace events", "[outputs]") {
  const auto dir = run_ok("trace_json", {kSeeded});
  const auto j = read_json(dir / "trace.json");
  REQUIRE(j.contains("traceEvents"));
  REQUIRE(j["traceEvents"].is_array());
  CHECK_FALSE(j["traceEvents"].empty());
  // Each replica's process is named once, with its GPU, model and TP.
  const auto& first = j["traceEvents"].at(0);
  CHECK(first["name"] == "process_name");
  CHECK(first["args"]["name"] == "replica 0 (a100-80gb, meta-llama/Llama-2-7b-hf, tp1)");
}

TEST_CASE("trace.json draws every KV transfer of a disaggregated run on its decode replica",
          "[outputs][pd]") {
  const auto dir =
      run_ok("trace_pd", {"configs/pd_h100_llama3_8b.yaml", "--set", "workload.num_requests=40"});
  const auto j = read_json(dir / "trace.json");
  const auto s = read_json(dir / "summary.json");
  double bytes = 0;
  int slices = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != 1 || e["pid"] == ChromeTraceWriter::kRequestsPid) continue;
    ++slices;
    CHECK(s["replicas"][e["pid"].get<int>()]["role"] == "decode");
    CHECK(e["dur"].get<double>() > 0);
    bytes += e["args"]["bytes"].get<double>();
  }
  CHECK(slices == 40);
  CHECK(j["otherData"]["transfers"] == 40);
  CHECK(bytes == Approx(s["disaggregation"]["kv_bytes"].get<double>()).epsilon(1e-9));
}

TEST_CASE("an output folder holds only this run's files, and none after a failed run",
          "[outputs]") {
  const auto dir = fresh_dir("stale_outputs");
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {kSeeded, "--out", dir.string(), "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_simulate(args);
  };
  REQUIRE(run({}).exit_code == 0);
  REQUIRE(fs::exists(dir / "trace.json"));
  REQUIRE(fs::exists(dir / "requests.csv"));
  // Without CSV and trace, the earlier run's CSV and trace are gone, not left beside new files.
  REQUIRE(run({"--set", "output.csv=false", "--set", "output.trace=false"}).exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "trace.json"));
  CHECK_FALSE(fs::exists(dir / "requests.csv"));
  CHECK(fs::exists(dir / "requests.h5"));
  // A run that fails once its writers are open (its first arrival is past the simulated-time
  // horizon) leaves no file: no partial file and no older summary.json looks like its result.
  const auto bad = run({"--set", "workload.arrival.qps=1e-10", "--set", "workload.duration_s=100"});
  INFO(bad.output);
  CHECK(bad.exit_code == 1);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("requests.h5 and steps.h5 are readable by h5dump", "[outputs]") {
  if (std::system("command -v h5dump >/dev/null 2>&1") != 0) {
    WARN("h5dump not found (Debian package hdf5-tools): skipping");
    return;
  }
  const auto dir = run_ok("hdf5_files", {kSeeded});
  const auto requests = run_command("h5dump", {"-H", (dir / "requests.h5").string()});
  INFO(requests.output);
  CHECK(requests.exit_code == 0);
  CHECK_THAT(requests.output, Catch::Contains("DATASET \"requests\"") &&
                                  Catch::Contains("first_token_ns") && Catch::Contains("( 200 )"));
  const auto steps = run_command("h5dump", {"-H", (dir / "steps.h5").string()});
  INFO(steps.output);
  CHECK(steps.exit_code == 0);
  CHECK_THAT(steps.output,
             Catch::Contains("DATASET \"steps\"") && Catch::Contains("prefill_tokens"));
}

TEST_CASE("overriding scheduler.chunk_size with --set changes the prefill chunks", "[set]") {
  // long_prompts.yaml: 3000-token prompts, chunk_size 512 in the file.
  const auto base = run_ok("chunk_512", {"tests/tools/configs/long_prompts.yaml"});
  const auto big = run_ok("chunk_1024", {"tests/tools/configs/long_prompts.yaml", "--set",
                                         "scheduler.chunk_size=1024"});
  CHECK(max_prefill_tokens(base / "steps.csv") == 512);
  CHECK(max_prefill_tokens(big / "steps.csv") == 1024);
  // 3000 tokens take ⌈3000/512⌉ = 6 steps of 512 or ⌈3000/1024⌉ = 3 of 1024 to prefill.
  CHECK(read_json(big / "summary.json")["steps"].get<long long>() <
        read_json(base / "summary.json")["steps"].get<long long>());
}

TEST_CASE("overriding workload.num_requests with --set limits the run", "[set]") {
  const auto dir = run_ok("num_requests_50", {kSeeded, "--set", "workload.num_requests=50"});
  CHECK(read_json(dir / "summary.json")["requests"]["arrived"] == 50);
  CHECK(CsvTable(dir / "requests.csv").rows().size() == 50);
}

TEST_CASE("simulate --sensitivity reports how far latencies move per 1% of step-time error",
          "[outputs][sensitivity]") {
  const std::string golden = fixture("configs/golden_fixed.yaml").string();
  // One request at a time (1 req/s, 16 ms each): every latency is a sum of step times, so it
  // moves exactly with them.
  const auto light = read_json(run_ok("sensitivity_light", {golden, "--sensitivity", "2"}) /
                               "summary.json")["sensitivity"];
  CHECK(light["delta_pct"] == 2.0);
  for (const char* m : {"ttft", "tpot", "e2e"}) {
    for (const char* stat : {"mean", "p50", "p99"}) {
      INFO(m << " " << stat);
      CHECK(light["gain"][m][stat].get<double>() == Approx(1.0).margin(1e-6));
    }
  }
  // 100 req/s: requests overlap and wait for each other's steps; the wait grows with step time
  // while the arrival times stay put, so the mean E2E moves more than the step times.
  const auto busy = read_json(
      run_ok("sensitivity_busy", {golden, "--sensitivity", "2", "--set", "workload.arrival.qps=100",
                                  "--set", "workload.num_requests=200"}) /
      "summary.json")["sensitivity"];
  CHECK(busy["gain"]["e2e"]["mean"].get<double>() > 1.1);
  // Off by default.
  CHECK_FALSE(
      read_json(run_ok("sensitivity_off", {golden}) / "summary.json").contains("sensitivity"));
}

TEST_CASE(
    "an engine profile's CUDA-graph mode and async scheduling apply unless the config sets them",
    "[outputs][engine]") {
  const std::string config = fixture("configs/engine_v1.yaml").string();
  const auto latency = [](const fs::path& dir) {
    return read_json(dir / "summary.json")["latency_ms"];
  };
  // vllm-v1 says: piecewise CUDA graphs (capture size min(2 x 128, 512) = 256), async scheduling.
  const auto by_engine = latency(run_ok("engine_default", {config}));
  const auto spelled_out =
      latency(run_ok("engine_explicit", {config, "--set", "replicas.0.cuda_graph_mode=piecewise",
                                         "--set", "replicas.0.cuda_graph_max_tokens=256", "--set",
                                         "scheduler.async_scheduling=true"}));
  CHECK(by_engine == spelled_out);
  // The config's own settings win.
  CHECK(latency(run_ok("engine_v0_graphs",
                       {config, "--set", "replicas.0.cuda_graph_mode=decode_only"})) != by_engine);
  CHECK(latency(run_ok("engine_sync", {config, "--set", "scheduler.async_scheduling=false"})) !=
        by_engine);
}

TEST_CASE("what the workload changed in its input is counted in summary.json and the table",
          "[tools][outputs]") {
  const auto dir = fresh_dir("workload_counts");
  {
    std::ofstream trace(dir / "trace.csv");
    trace << "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,0,3\n0.0,300,0\n0.01,100,2\n";
    std::ofstream cfg(dir / "run.yaml");
    cfg << "name: counts\nseed: 1\nmodel: meta-llama/Llama-2-7b-hf\n"
           "replicas: [{gpu: a100-80gb}]\n"
           "scheduler: {kind: sarathi, chunk_size: 512, num_gpu_blocks: 1000}\n"
           "cost_model: {kind: fixed, prefill_ns_per_token: 10000, decode_ns_per_step: 5000000}\n"
           "workload:\n  trace: {format: vidur, file: trace.csv}\n";
  }
  const auto r = run_simulate({(dir / "run.yaml").string(), "--out", (dir / "out").string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("workload   1 rows with prompt 0 raised to 1, 1 rows with "
                                       "output 0 raised to 1"));
  const auto s = read_json(dir / "out" / "summary.json");
  CHECK(s["workload_counts"]["yielded"] == 3);
  CHECK(s["workload_counts"]["zero_prompt_rows_raised_to_1"] == 1);
  CHECK(s["workload_counts"]["zero_output_rows_raised_to_1"] == 1);
  CHECK(s["workload_counts"]["clipped_to_max_tokens"] == 0);
}

}  // namespace servesim::test
