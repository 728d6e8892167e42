// run_example_config [--print-digest] CONFIG: runs `simulate CONFIG --set
// workload.num_requests=200` and checks that it exits 0, that summary.json accounts for every
// request (arrived = finished + rejected, 0 < arrived ≤ 200), and that its digest (FNV-1a 64 of
// summary.json without the version, output, config, input and provenance fields) is the one in
// tests/tools/data/example_digests.txt: a speed change must not move a result. A change that
// moves results on purpose regenerates that file, in its own commit that says why:
//   for c in <the configs>; do build/tests/tools/run_example_config --print-digest configs/$c; done
// One CTest per example config (tests/tools/CMakeLists.txt).
// Exit 0 pass, 1 fail.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "sim/util/fnv_hash.hpp"
#include "tests/tools/tool_runner.hpp"

namespace fs = std::filesystem;
using servesim::test::read_json;
using servesim::test::run_simulate;

namespace {

// summary.json's results: without what names this build, the output files, the config's paths
// and the input files' own text (comments in them change their hashes, not the results).
std::string summary_digest(nlohmann::json summary) {
  for (const char* k : {"servesim_version", "outputs", "config", "inputs", "provenance"}) {
    summary.erase(k);
  }
  return fmt::format("{:016x}", servesim::fnv1a64(summary.dump()));
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
  const bool print_digest = argc == 3 && std::string(argv[1]) == "--print-digest";
  if (argc != 2 && !print_digest) {
    std::cerr << "usage: run_example_config [--print-digest] CONFIG\n";
    return 2;
  }
  const std::string config = argv[argc - 1];
  const fs::path path = servesim::test::source_root() / config;
  const auto dir = servesim::test::fresh_dir("config_" + path.stem().string());
  const auto r = run_simulate(
      {config, "--set", "workload.num_requests=200", "--out", dir.string(), "--quiet"});
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
  if (digest != committed) {
    std::cerr << "FAIL: " << config << ": summary.json digest " << digest << ", committed "
              << (committed.empty() ? "none" : committed)
              << " (tests/tools/data/example_digests.txt): the results moved. A change meant to "
                 "move them regenerates that file (see run_example_config.cpp)\n";
    return 1;
  }
  return 0;
}
