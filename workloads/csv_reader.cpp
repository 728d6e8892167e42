#include "workloads/csv_reader.hpp"

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

bool blank(std::string_view s) {
  for (const char c : s) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

}  // namespace

CsvReader::CsvReader(std::string path)
    : path_(std::move(path)), in_(open_input_file(path_, "a CSV file")) {
  if (!read_line() || blank(buf_)) {
    throw_input_error(path_, 1, 0, "empty file (expected a header line of column names)");
  }
  line_ = 1;
  // A UTF-8 byte order mark would otherwise become part of the first column name.
  if (buf_.size() >= 3 && buf_.compare(0, 3, "\xEF\xBB\xBF") == 0) buf_.erase(0, 3);
  std::vector<std::string_view> names;
  split(buf_, names);
  for (const auto n : names) header_.emplace_back(n);
  fields_.reserve(header_.size());
}

void CsvReader::split(std::string_view text, std::vector<std::string_view>& out) const {
  out.clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(trim(text.substr(start)));
      return;
    }
    out.push_back(trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
}

bool CsvReader::has_column(std::string_view name) const {
  for (const auto& h : header_) {
    if (h == name) return true;
  }
  return false;
}

std::size_t CsvReader::column(std::string_view name, std::string_view expected) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  throw_input_error(path_, 1, 0,
                    fmt::format("missing column '{}' (expected columns: {})", name, expected));
}

bool read_csv_line(std::istream& in, std::string& line, const std::string& path,
                   std::int64_t line_number) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) return !line.empty();
    if (c == '\n') return true;
    if (line.size() >= kMaxCsvLineBytes) {
      throw_input_error(
          path, static_cast<int>(line_number), 0,
          fmt::format("a line longer than {} bytes (expected one row per line)", kMaxCsvLineBytes));
    }
    line.push_back(static_cast<char>(c));
  }
}

bool CsvReader::read_line() { return read_csv_line(in_, buf_, path_, line_ + 1); }

bool CsvReader::next_row() {
  while (read_line()) {
    ++line_;
    if (blank(buf_)) continue;
    split(buf_, fields_);
    if (fields_.size() != header_.size()) {
      fail_row(
          fmt::format("{} fields (expected {} as in the header)", fields_.size(), header_.size()));
    }
    return true;
  }
  return false;
}

std::string_view CsvReader::field(std::size_t index) const { return fields_.at(index); }

void CsvReader::fail_row(const std::string& message) const {
  throw_input_error(path_, static_cast<int>(line_), 0, message);
}

void CsvReader::fail_field(std::size_t index, std::string_view expected) const {
  fail_row(
      fmt::format("column '{}': expected {}, got '{}'", header_.at(index), expected, field(index)));
}

}  // namespace servesim
