#include "tests/tools/tool_runner.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/wait.h>

namespace servesim::test {
namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

}  // namespace

CommandResult run_command(const std::string& program, const std::vector<std::string>& args) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string command = "cd ";
  command.append(shell_quote(source_root().string())).append(" && ").append(shell_quote(program));
  for (const auto& a : args) command.append(" ").append(shell_quote(a));
  command.append(" 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start: " + command);
  CommandResult result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

CommandResult run_simulate(const std::vector<std::string>& args) {
  return run_command(SERVESIM_SIMULATE_BIN, args);
}

CommandResult run_plan(const std::vector<std::string>& args) {
  return run_command(SERVESIM_PLAN_BIN, args);
}

CommandResult run_sweep(const std::vector<std::string>& args) {
  return run_command(SERVESIM_SWEEP_BIN, args);
}

std::string sweep_binary() { return SERVESIM_SWEEP_BIN; }
std::string simulate_binary() { return SERVESIM_SIMULATE_BIN; }

CommandResult run_sim2real(const std::vector<std::string>& args) {
  return run_command(SERVESIM_SIM2REAL_BIN, args);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SERVESIM_TOOLS_TEST_OUT) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path source_root() { return fs::path(SERVESIM_SOURCE_DIR); }

fs::path fixture(const std::string& relative) {
  return source_root() / "tests" / "tools" / relative;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_text(path)); }

CsvTable::CsvTable(const fs::path& path) : path_(path) {
  std::istringstream in(read_text(path));
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path.string() + ": empty");
  header_ = split(line, ',');
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto cells = split(line, ',');
    if (cells.size() != header_.size()) {
      throw std::runtime_error(path.string() + ": row with " + std::to_string(cells.size()) +
                               " cells under a header of " + std::to_string(header_.size()));
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) row[header_[i]] = cells[i];
    rows_.push_back(std::move(row));
  }
}

long long CsvTable::integer(std::size_t i, const std::string& column) const {
  const auto& row = rows_.at(i);
  const auto it = row.find(column);
  if (it == row.end()) throw std::runtime_error(path_.string() + ": no column " + column);
  return std::stoll(it->second);
}

}  // namespace servesim::test
