// run_example_config [--print-digest | --no-digest] CONFIG: runs `simulate CONFIG --set
// workload.num_requests=200` (a benchmark client's config: 150 prompts and 50 warm-ups) and checks
// that it exits 0, that summary.json accounts for every request (arrived = finished + rejected, 0 <
// arrived ≤ 200), and that its digest (FNV-1a 64 of summary.json without the version, output,
// config, input and provenance fields) is the one in tests/tools/data/example_digests.txt: a speed
// change must not move a result. A change that moves results on purpose regenerates that file, in
// its own commit that says why:
//   for c in <the configs>; do build/tests/tools/run_example_config --print-digest configs/$c; done
// Then it runs the config again with --bands and checks that it exits 0, that its summary is the
// first run's plus summary["bands"], and that each stated band holds its point estimate: every
// example a user can run, they can run with bands. --no-digest (configs with no committed
// digest, the experiment configs) skips the digest check only.
// One CTest per example and experiment config (tests/tools/CMakeLists.txt).
// Exit 0 pass, 1 fail.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/config/config_node.hpp"
#include "sim/util/fnv_hash.hpp"
#include "tests/tools/tool_runner.hpp"

namespace fs = std::filesystem;
using servesim::test::read_json;
using servesim::test::run_simulate;

namespace {

// summary.json's results: without what names this build, the output files, the config's paths
// and the input files' own text (comments in them change their hashes, not the results).
nlohmann::json results_only(nlohmann::json summary) {
  for (const char* k : {"servesim_version", "outputs", "config", "inputs", "provenance"}) {
    summary.erase(k);
  }
  return summary;
}

std::string summary_digest(const nlohmann::json& summary) {
  return fmt::format("{:016x}", servesim::fnv1a64(results_only(summary).dump()));
}

// Every {value, low, high} band under `j` holds its value; returns how many there are, or -1 at
// the first that does not (named on stderr).
int check_bands(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return 0;
  if (j.contains("value") && j.contains("low") && j.contains("high")) {
    const double v = j["value"].get<double>();
    if (j["low"].get<double>() <= v && v <= j["high"].get<double>()) return 1;
    std::cerr << "FAIL: band " << where << " " << j.dump() << " does not hold its value\n";
    return -1;
  }
  int n = 0;
  for (const auto& [k, v] : j.items()) {
    const int m = check_bands(v, where + "/" + k);
    if (m < 0) return -1;
    n += m;
  }
  return n;
}

// `simulate CONFIG` with at most 200 requests: workload.num_requests=200, or for a benchmark
// client (which sends num_prompts after num_warmups) 150 prompts and 50 warm-ups.
std::vector<std::string> at_most_200_requests(const std::string& config) {
  const auto root =
      servesim::ConfigNode::load_file((servesim::test::source_root() / config).string());
  const auto workload = root.find("workload");
  if (workload && workload->has("client")) {
    return {config, "--set", "workload.client.num_prompts=150", "--set",
            "workload.client.num_warmups=50"};
  }
  return {config, "--set", "workload.num_requests=200"};
}

// The --bands run of `config`: exits 0, adds summary["bands"] to `plain` and nothing else, and
// every band it states holds its point estimate. Returns 0 pass, 1 fail.
int check_bands_run(const std::string& config, const nlohmann::json& plain) {
  const auto dir = servesim::test::fresh_dir("bands_" + fs::path(config).stem().string());
  // Three draws, the fewest --bands takes: the corners and the middle of every regime's range.
  std::vector<std::string> args = at_most_200_requests(config);
  for (const char* a : {"--bands", "--band-draws", "3", "--out"}) args.emplace_back(a);
  args.push_back(dir.string());
  args.emplace_back("--quiet");
  const auto r = run_simulate(args);
  if (r.exit_code != 0) {
    std::cerr << config << " --bands: simulate exited " << r.exit_code << ":\n" << r.output;
    return 1;
  }
  nlohmann::json banded = results_only(read_json(dir / "summary.json"));
  if (!banded.contains("bands")) {
    std::cerr << "FAIL: " << config << " --bands: summary.json has no bands\n";
    return 1;
  }
  const nlohmann::json bands = banded["bands"];
  banded.erase("bands");
  if (banded != results_only(plain)) {
    std::cerr << "FAIL: " << config
              << " --bands: the point estimate differs from the run without\n";
    return 1;
  }
  const std::string status = bands.value("status", "");
  const int held = check_bands(bands, "bands");
  if (held < 0) return 1;
  if (status == "measured" ? held == 0 : status != "unmeasured") {
    std::cerr << "FAIL: " << config << " --bands: status '" << status << "' with " << held
              << " bands\n";
    return 1;
  }
  std::cout << config << " --bands: " << status << ", " << held << " bands\n";
  return 0;
}

// The committed digest of `config`; "" when the file has none.
std::string committed_digest(const std::string& config) {
  std::ifstream in(servesim::test::source_root() / "tests/tools/data/example_digests.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, digest;
    if (fields >> name >> digest && name == config) return digest;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string flag = argc == 3 ? argv[1] : "";
  const bool print_digest = flag == "--print-digest";
  const bool no_digest = flag == "--no-digest";
  if (argc != 2 && !print_digest && !no_digest) {
    std::cerr << "usage: run_example_config [--print-digest | --no-digest] CONFIG\n";
    return 2;
  }
  const std::string config = argv[argc - 1];
  const fs::path path = servesim::test::source_root() / config;
  const auto dir = servesim::test::fresh_dir("config_" + path.stem().string());
  std::vector<std::string> args = at_most_200_requests(config);
  for (const std::string& a : {std::string("--out"), dir.string(), std::string("--quiet")}) {
    args.push_back(a);
  }
  const auto r = run_simulate(args);
  if (r.exit_code != 0) {
    std::cerr << config << ": simulate exited " << r.exit_code << ":\n" << r.output;
    return 1;
  }
  const auto summary = read_json(dir / "summary.json");
  const auto& req = summary.at("requests");
  const auto arrived = req.at("arrived").get<long long>();
  const auto finished = req.at("finished").get<long long>();
  const auto rejected = req.at("rejected").get<long long>();
  if (!print_digest) {
    std::cout << config << ": arrived " << arrived << ", finished " << finished << ", rejected "
              << rejected << "\n";
  }
  if (arrived != finished + rejected) {
    std::cerr << "FAIL: arrived != finished + rejected\n";
    return 1;
  }
  if (arrived <= 0 || arrived > 200) {
    std::cerr << "FAIL: expected 0 < arrived ≤ 200 (workload.num_requests=200)\n";
    return 1;
  }
  const std::string digest = summary_digest(summary);
  if (print_digest) {
    std::cout << config << " " << digest << "\n";
    return 0;
  }
  const std::string committed = committed_digest(config);
  if (!no_digest && digest != committed) {
    std::cerr << "FAIL: " << config << ": summary.json digest " << digest << ", committed "
              << (committed.empty() ? "none" : committed)
              << " (tests/tools/data/example_digests.txt): the results moved. A change meant to "
                 "move them regenerates that file (see run_example_config.cpp)\n";
    return 1;
  }
  return check_bands_run(config, summary);
}
