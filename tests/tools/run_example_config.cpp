// run_example_config CONFIG: runs `simulate CONFIG --set workload.num_requests=200` and checks
// that it exits 0 and that summary.json accounts for every request (arrived = finished +
// rejected, 0 < arrived ≤ 200). One CTest per example config (tests/tools/CMakeLists.txt).
// Exit 0 pass, 1 fail, 77 skipped (the config reads ../shared/data, which is absent).
#include <filesystem>
#include <iostream>

#include "tests/tools/tool_runner.hpp"

namespace fs = std::filesystem;
using servesim::test::read_json;
using servesim::test::read_text;
using servesim::test::run_simulate;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: run_example_config CONFIG\n";
    return 2;
  }
  const std::string config = argv[1];
  const fs::path path = servesim::test::source_root() / config;
  if (read_text(path).find("shared/data") != std::string::npos &&
      !fs::is_directory(fs::path(SERVESIM_SHARED_DIR) / "data")) {
    std::cout << "skipped: " << config << " reads shared/data, absent at " << SERVESIM_SHARED_DIR
              << "\n";
    return 77;
  }
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
  std::cout << config << ": arrived " << arrived << ", finished " << finished << ", rejected "
            << rejected << "\n";
  if (arrived != finished + rejected) {
    std::cerr << "FAIL: arrived != finished + rejected\n";
    return 1;
  }
  if (arrived <= 0 || arrived > 200) {
    std::cerr << "FAIL: expected 0 < arrived ≤ 200 (workload.num_requests=200)\n";
    return 1;
  }
  return 0;
}
