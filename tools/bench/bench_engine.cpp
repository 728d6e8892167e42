// bench_engine [--config FILE] [--requests N]... [--cost-model roofline|fixed|analytical]...
//              [--outputs off|on|both] [--out DIR] [--keep-outputs] [--set key=value]... [--json]
// The core speed and memory benchmark (tools/bench/README.md): simulated requests per wall
// second, engine steps per second and peak RSS of one run per (requests, cost model, outputs)
// combination. Peak RSS is process-wide, so each combination runs in a fresh copy of this
// program (re-executed through /proc/self/exe with --single); CPU affinity is inherited, so
// `taskset -c 0 bench_engine ...` pins every run to one core.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "tools/common/option_validators.hpp"
#include "tools/common/tool_main.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Vidur: 10,000 requests in 15.7 s of simulation (plus 6 s start-up) ≈ 640 requests/s.
constexpr double kVidurRequestsPerS = 640.0;

// A fixed-latency model tuned to give about the roofline run's step count and throughput
// (12 µs per prefill token, 5 ms + 25 µs per decode), so the two differ only in cost-model time.
constexpr const char* kFixedCostModel =
    "cost_model={kind: fixed, prefill_ns_per_token: 12000, decode_ns_per_step: 5000000, "
    "decode_ns_per_request: 25000}";

struct Options {
  std::string config;
  std::vector<std::int64_t> requests{10'000, 100'000, 1'000'000};
  std::vector<std::string> cost_models{"roofline", "fixed"};
  std::string outputs = "both";
  std::string out_dir = "out/bench";
  bool keep_outputs = false;
  std::vector<std::string> overrides;
  bool json_lines = false;
  bool single = false;
  // A fleet of this many copies of the config's first replica group, the arrival rate scaled by
  // it (the same load per replica): the per-request cost against fleet size.
  std::int64_t replicas = 0;
};

// --set overrides plus, with --replicas N, the fleet size and the arrival rate × N of the config
// as the other overrides leave it.
std::vector<std::string> fleet_overrides(const Options& o) {
  std::vector<std::string> overrides = o.overrides;
  if (o.replicas <= 0) return overrides;
  const auto config = servesim::load_run_config(o.config, overrides, std::nullopt);
  const double qps = config.workload.at("arrival").get_positive("qps");
  overrides.push_back(fmt::format("replicas.0.count={}", o.replicas));
  overrides.push_back(
      fmt::format("workload.arrival.qps={:.17g}", qps * static_cast<double>(o.replicas)));
  return overrides;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return tv(u.ru_utime) + tv(u.ru_stime);
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::uintmax_t folder_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

// One run in this process; returns the measurements as one JSON object.
json run_single(const Options& o) {
  if (o.requests.size() != 1 || o.cost_models.size() != 1 || o.outputs == "both") {
    throw std::invalid_argument(
        "--single needs one --requests, one --cost-model, --outputs on|off");
  }
  const std::int64_t n = o.requests.front();
  const std::string& cost_model = o.cost_models.front();
  std::vector<std::string> overrides = fleet_overrides(o);
  overrides.push_back(fmt::format("workload.num_requests={}", n));
  if (cost_model == "fixed") {
    overrides.emplace_back(kFixedCostModel);
  } else {
    overrides.push_back("cost_model={kind: " + cost_model + "}");
  }
  const bool outputs = o.outputs == "on";

  const auto setup_start = std::chrono::steady_clock::now();
  const auto config = servesim::load_run_config(o.config, overrides, std::nullopt);
  servesim::Simulation sim(config);
  const double setup_s = seconds_since(setup_start);
  const double setup_rss = peak_rss_mib();

  servesim::RunOptions options;
  options.write_outputs = outputs;
  const fs::path run_dir =
      fs::path(o.out_dir) / fmt::format("{}-{}-{}", config.name, cost_model, n);
  options.out_dir = run_dir.string();
  const double cpu_start = cpu_seconds();
  const auto run_start = std::chrono::steady_clock::now();
  const json summary = servesim::execute_run(sim, options);
  const double wall_s = seconds_since(run_start);
  const double cpu_s = cpu_seconds() - cpu_start;

  json r;
  r["requests"] = n;
  r["replicas"] = static_cast<std::int64_t>(sim.fleet().size());
  r["cost_model"] = cost_model;
  r["outputs"] = outputs;
  r["setup_s"] = setup_s;
  r["wall_s"] = wall_s;
  r["cpu_s"] = cpu_s;
  r["steps"] = summary["steps"];
  r["finished"] = summary["requests"]["finished"];
  r["rejected"] = summary["requests"]["rejected"];
  r["makespan_s"] = summary["makespan_s"];
  r["p99_scheduling_delay_ms"] = summary["latency_ms"]["scheduling_delay"]["p99"];
  r["tbt_count"] = summary["latency_ms"]["tbt"]["count"];
  r["p99_tbt_ms"] = summary["latency_ms"]["tbt"]["p99"];
  r["setup_peak_rss_mib"] = setup_rss;
  r["peak_rss_mib"] = peak_rss_mib();
  if (outputs) {
    r["output_bytes"] = folder_bytes(run_dir);
    if (!o.keep_outputs) fs::remove_all(run_dir);
  }
  return r;
}

// Runs `args` (argv[0] first) as a child process and returns what it wrote on stdout.
std::string run_child(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t got = 0;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("benchmark run `{} {}` failed (wait status {})",
                                         args.front(), fmt::join(args.begin() + 1, args.end(), " "),
                                         status));
  }
  return out;
}

// Markdown table. Rates use wall time; "cpu req/s" uses the process's CPU time, which is what an
// idle core would give when other processes share the machine.
constexpr const char* kTableHeader =
    "| requests | cost | out | setup s | wall s | cpu s | req/s | cpu req/s | steps | steps/s | "
    "ns/step | peak RSS MiB | × Vidur |\n"
    "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";

std::string table_row(const json& r) {
  const double n = r["requests"].get<double>();
  const double wall = r["wall_s"].get<double>();
  const double cpu = r["cpu_s"].get<double>();
  const double steps = r["steps"].get<double>();
  return fmt::format(
      "| {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | "
      "{:.1f} | {:.0f}× |",
      r["requests"].get<std::int64_t>(), r["cost_model"].get<std::string>(),
      r["outputs"].get<bool>() ? "on" : "off", r["setup_s"].get<double>(), wall, cpu, n / wall,
      n / cpu, steps, steps / wall, 1e9 * wall / steps, r["peak_rss_mib"].get<double>(),
      n / wall / kVidurRequestsPerS);
}

int run_all(const Options& o, const std::string& self) {
  // Bad input fails here, once, with the config's own message (exit 1).
  servesim::build_run(servesim::load_run_config(o.config, fleet_overrides(o), std::nullopt));
  std::vector<bool> outputs;
  if (o.outputs != "on") outputs.push_back(false);
  if (o.outputs != "off") outputs.push_back(true);
  if (!o.json_lines) std::cout << kTableHeader << std::flush;
  for (const auto& cm : o.cost_models) {
    for (const bool out : outputs) {
      for (const std::int64_t n : o.requests) {
        std::vector<std::string> args{self,         "--single",         "--config",     o.config,
                                      "--requests", std::to_string(n),  "--cost-model", cm,
                                      "--outputs",  out ? "on" : "off", "--out",        o.out_dir};
        if (o.keep_outputs) args.emplace_back("--keep-outputs");
        if (o.replicas > 0) {
          args.emplace_back("--replicas");
          args.push_back(std::to_string(o.replicas));
        }
        for (const auto& s : o.overrides) {
          args.emplace_back("--set");
          args.push_back(s);
        }
        const json r = json::parse(run_child(args));
        std::cout << (o.json_lines ? r.dump() : table_row(r)) << "\n" << std::flush;
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"servesim engine benchmark: requests per wall second and peak RSS"};
  Options o;
  o.config = (fs::path(SERVESIM_SOURCE_DIR) / "tools/bench/h100_sharegpt_sarathi.yaml").string();
  app.add_option("--config", o.config, "Run configuration (YAML)");
  app.add_option("--requests", o.requests, "Request counts (repeatable)");
  app.add_option("--cost-model", o.cost_models,
                 "roofline, fixed and/or analytical (repeatable; default roofline and fixed)")
      ->check(CLI::IsMember({"roofline", "fixed", "analytical"}));
  app.add_option("--outputs", o.outputs, "off: summary only; on: HDF5 + capped trace; both")
      ->check(CLI::IsMember({"off", "on", "both"}));
  app.add_option("--out", o.out_dir, "Folder for the runs' output files");
  app.add_flag("--keep-outputs", o.keep_outputs, "Keep the output files (default: delete them)");
  app.add_option("--set", o.overrides, "Override a config key: key.path=value (repeatable)");
  app.add_flag("--json", o.json_lines, "Print one JSON object per run instead of a table");
  app.add_flag("--single", o.single, "Run one combination in this process (used internally)");
  app.add_option("--replicas", o.replicas,
                 "Run N copies of the config's first replica group at N x its arrival rate (the "
                 "same load per replica)")
      ->check(servesim::whole_number_in(1, 100000));
  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    if (o.single) {
      std::cout << run_single(o).dump() << "\n";
      return 0;
    }
    return run_all(o, argv[0]);
  });
}
