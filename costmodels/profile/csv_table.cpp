#include "costmodels/profile/csv_table.hpp"

#include <charconv>
#include <cmath>

#include "sim/config/input_error.hpp"
#include "sim/util/csv_reader.hpp"

namespace servesim {

CsvTable CsvTable::load(const std::string& path) {
  return read(CsvReader(path, "a readable CSV profile"));
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  return read(CsvReader::from_text(text, source));
}

CsvTable CsvTable::read(CsvReader csv) {
  CsvTable t;
  t.source_ = csv.path();
  t.header_ = csv.header();
  while (csv.next_row()) {
    std::vector<std::string>& cells = t.cells_.emplace_back();
    cells.reserve(csv.size());
    for (std::size_t i = 0; i < csv.size(); ++i) cells.emplace_back(csv.field(i));
    t.lines_.push_back(static_cast<int>(csv.line()));
  }
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
