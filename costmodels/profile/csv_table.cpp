#include "costmodels/profile/csv_table.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

CsvTable CsvTable::load(const std::string& path) {
  std::ifstream in = open_input_file(path, "a readable CSV profile");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable t;
  t.source_ = source;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1) {
      t.header_ = split(line);
      for (std::size_t i = 0; i < t.header_.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (!t.header_[i].empty() && t.header_[i] == t.header_[j]) {
            throw_input_error(
                source, 1, 0,
                "column '" + t.header_[i] + "' appears twice (expected each column once)");
          }
        }
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    if (cells.size() != t.header_.size()) {
      throw_input_error(source, lineno, 0,
                        "row has " + std::to_string(cells.size()) + " cells (expected " +
                            std::to_string(t.header_.size()) + " as in the header)");
    }
    t.cells_.push_back(std::move(cells));
    t.lines_.push_back(lineno);
  }
  if (t.header_.empty()) throw_input_error(source, 1, 0, "empty file (expected a CSV header)");
  return t;
}

bool CsvTable::has_column(std::string_view name) const {
  for (const std::string& h : header_) {
    if (h == name) return true;
  }
  return false;
}

std::size_t CsvTable::column(std::string_view name, std::string_view expected) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  throw_input_error(
      source_, 1, 0,
      "missing column '" + std::string(name) + "' (expected " + std::string(expected) + ")");
}

double CsvTable::number(std::size_t row, std::size_t col) const {
  const std::string& s = cells_[row][col];
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    throw_input_error(source_, lines_[row], 0,
                      "column '" + header_[col] + "': '" + s + "' is not a finite number");
  }
  return v;
}

double CsvTable::number_or(std::size_t row, std::size_t col, double fallback) const {
  return cells_[row][col].empty() ? fallback : number(row, col);
}

bool CsvTable::boolean(std::size_t row, std::size_t col) const {
  const std::string& s = cells_[row][col];
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  throw_input_error(source_, lines_[row], 0,
                    "column '" + header_[col] + "': '" + s +
                        "' is not a boolean (expected True "
                        "or False)");
}

}  // namespace servesim
