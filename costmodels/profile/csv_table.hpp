#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/util/csv_reader.hpp"

namespace servesim {

// A small comma-separated table read fully into memory, by CsvReader's rules. Column lookups and
// numeric conversions throw InputError naming "file:line: …" so a bad profile is found by its
// row, never silently skipped. Immutable after load.
class CsvTable {
 public:
  static CsvTable load(const std::string& path);
  static CsvTable parse(const std::string& text, const std::string& source);

  const std::string& source() const { return source_; }
  std::size_t rows() const { return cells_.size(); }
  // Index of a required column; error names the file, line 1 and what was expected.
  std::size_t column(std::string_view name, std::string_view expected) const;
  bool has_column(std::string_view name) const;
  // 1-based line number of data row `row` in the file.
  int line(std::size_t row) const { return lines_[row]; }
  const std::string& cell(std::size_t row, std::size_t col) const { return cells_[row][col]; }
  const std::string& column_name(std::size_t col) const { return header_[col]; }
  // A finite number (nan and inf are errors naming the file, line and column).
  double number(std::size_t row, std::size_t col) const;
  // An empty cell reads as `fallback`; anything else must be a number.
  double number_or(std::size_t row, std::size_t col, double fallback) const;
  bool boolean(std::size_t row, std::size_t col) const;

 private:
  static CsvTable read(CsvReader csv);

  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> cells_;
  std::vector<int> lines_;
};

}  // namespace servesim
