#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::test {

// A small seeded run whose randomness reaches every part (tests/tools/configs/seeded.yaml).
inline constexpr const char* kSeeded = "tests/tools/configs/seeded.yaml";

// What one run of a command left behind: its exit status (-1 if it did not exit normally) and
// everything it printed on stdout and stderr, interleaved.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

// Runs `program args...` through the shell (each argument single-quoted) and waits for it.
CommandResult run_command(const std::string& program, const std::vector<std::string>& args);

// Runs the `simulate` binary built next to these tests, in the repository root.
CommandResult run_simulate(const std::vector<std::string>& args);
// The path of the `simulate` binary (for scripts and `env VAR=… simulate` runs).
std::string simulate_binary();
// Runs the `sweep` binary built next to these tests, in the repository root.
CommandResult run_sweep(const std::vector<std::string>& args);
// The path of that `sweep` binary (for scripts that run it: SWEEP=… in their environment).
std::string sweep_binary();
// Runs the `plan` binary built next to these tests, in the repository root.
CommandResult run_plan(const std::vector<std::string>& args);
// Runs the `sim2real` binary built next to these tests, in the repository root.
CommandResult run_sim2real(const std::vector<std::string>& args);

// A fresh, empty folder under the build tree for one test's outputs.
std::filesystem::path fresh_dir(const std::string& name);

// Paths of the fixture files (tests/tools/...) and of the repository root.
std::filesystem::path source_root();
std::filesystem::path fixture(const std::string& relative);

std::string read_text(const std::filesystem::path& path);
nlohmann::json read_json(const std::filesystem::path& path);

// A CSV file with a header row, its cells as strings; rows()[i].at("column").
class CsvTable {
 public:
  explicit CsvTable(const std::filesystem::path& path);
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::map<std::string, std::string>>& rows() const { return rows_; }
  // The integer in `column` of row `i`.
  long long integer(std::size_t i, const std::string& column) const;

 private:
  std::filesystem::path path_;
  std::vector<std::string> header_;
  std::vector<std::map<std::string, std::string>> rows_;
};

}  // namespace servesim::test
