// bench_sweep: thread scaling and memory of `sweep` (see tools/bench/README.md).
//   bench_sweep [--reps N] [--threads 1,2]   the E2.9 study (studies/e2_9_chunk_budget.sh:
//                                            11 budgets × 5 seeds and the oracle's grid) once per
//                                            thread count, the counts alternated N times; median
//                                            wall, speedup, efficiency
//   bench_sweep --memory 10,1000             peak RSS of sweeps of that many points (each in a
//                                            fresh process: ru_maxrss is per process)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/util/sample_stats.hpp"
#include "tools/common/tool_main.hpp"
#include "tools/sweep/shards.hpp"
#include "tools/sweep/study.hpp"

namespace fs = std::filesystem;
using servesim::sweep::Shards;
using servesim::sweep::SweepOptions;

namespace {

const std::string kE29 =
    std::string(SERVESIM_SOURCE_DIR) + "/configs/experiments/e2_9_chunk_budget.yaml";

// The E2.9 study: its script (studies/e2_9_chunk_budget.sh) with this build's sweep.
const std::string kE29Script = std::string(SERVESIM_SOURCE_DIR) + "/studies/e2_9_chunk_budget.sh";

// Runs `command` through the shell; its stdout, or an exception when it fails.
std::string run(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("cannot start: " + command);
  char buf[4096];
  std::string text;
  while (fgets(buf, sizeof buf, p)) text += buf;
  if (pclose(p) != 0) throw std::runtime_error("failed: " + command);
  return text;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// One sweep of `points` points of a small workload, in this process: prints its peak RSS.
int memory_single(int points, const std::string& out) {
  SweepOptions o;
  o.config = kE29;
  o.sets = {"workload.num_requests=200"};
  o.varies = {fmt::format("workload.arrival.qps=0.2..{}:+0.002", 0.2 + 0.002 * (points - 1))};
  o.out_dir = out;
  o.plots = false;
  o.quiet = true;
  int argc = 0;
  char** argv = nullptr;
  const Shards shards(argc, argv);
  const int code = servesim::sweep::run_sweep(o, shards).identical ? 0 : 3;
  std::cout << fmt::format("{{\"points\": {}, \"peak_rss_mib\": {:.1f}}}\n", points,
                           peak_rss_mib());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_sweep: thread scaling and memory of sweep"};
  int reps = 5;
  std::vector<int> threads = {1, 2};
  std::vector<int> memory;
  int single = 0;
  std::string out = "out/bench_sweep";
  app.add_option("--reps", reps, "Alternations of the thread counts (default 5)");
  app.add_option("--threads", threads, "Thread counts (default 1,2)")->delimiter(',');
  app.add_option("--memory", memory, "Point counts for the memory runs (e.g. 10,1000)")
      ->delimiter(',');
  app.add_option("--single", single, "(internal) one memory run of this many points");
  app.add_option("--out", out, "Scratch folder (default out/bench_sweep)");
  return servesim::tool_main(app, argc, argv, std::cout, std::cerr, [&] {
    if (single > 0) return memory_single(single, out);
    if (!memory.empty()) {
      std::cout << "points  peak RSS (MiB)\n";
      for (const int n : memory) {
        // popen runs a shell: /proc/self/exe would be the shell's.
        const auto j = nlohmann::json::parse(
            run(fmt::format("{} --single {} --out {}/memory",
                            fs::read_symlink("/proc/self/exe").string(), n, out)));
        std::cout << fmt::format("{:>6}  {:>14.1f}\n", j["points"].get<int>(),
                                 j["peak_rss_mib"].get<double>());
      }
      return 0;
    }
    std::vector<int> counts;
    for (int r = 0; r < reps; ++r) counts.insert(counts.end(), threads.begin(), threads.end());
    const std::string dir = out + "/scaling";
    run(fmt::format("SWEEP={} {} --threads {} --out {} --no-plots --quiet", SERVESIM_SWEEP_BIN,
                    kE29Script, fmt::join(counts, ","), dir));
    const auto scaling = nlohmann::json::parse(std::ifstream(fs::path(dir) / "scaling.json"));
    std::map<int, std::vector<double>> walls;
    bool identical = true;
    for (const auto& s : scaling) {
      walls[s["threads"].get<int>()].push_back(s["wall_s"].get<double>());
      identical = identical && s["identical"].get<bool>();
    }
    const double base = servesim::median(walls[threads.front()]);
    std::cout << fmt::format(
        "E2.9 study: 11 budgets × 5 seeds × 2 cost models = 110 runs, {} alternations\n", reps);
    std::cout << "threads  median wall (s)  min      max      speedup  efficiency\n";
    for (const int t : threads) {
      const auto& w = walls[t];
      const double m = servesim::median(w);
      std::cout << fmt::format("{:>7}  {:>15.3f}  {:>7.3f}  {:>7.3f}  {:>7.2f}  {:>10.2f}\n", t, m,
                               *std::min_element(w.begin(), w.end()),
                               *std::max_element(w.begin(), w.end()), base / m,
                               base / m * threads.front() / t);
    }
    std::cout << "results identical across thread counts: " << (identical ? "yes" : "NO") << "\n";
    return identical ? 0 : 3;
  });
}
