#include "sim/util/csv_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"

namespace servesim {
namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool blank(std::string_view s) { return std::all_of(s.begin(), s.end(), space); }

// Whether `s` leaves a quoted field open (an odd count of quotes: "" counts two).
bool quote_open(std::string_view s) { return std::count(s.begin(), s.end(), '"') % 2 == 1; }

}  // namespace

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

CsvReader::CsvReader(std::string path, std::string_view what) : path_(std::move(path)) {
  in_ = std::make_unique<std::ifstream>(open_input_file(path_, std::string(what)));
  read_header();
}

CsvReader::CsvReader(std::unique_ptr<std::istream> in, std::string source)
    : path_(std::move(source)), in_(std::move(in)) {
  read_header();
}

CsvReader CsvReader::from_text(std::string text, std::string source) {
  return CsvReader(std::make_unique<std::istringstream>(std::move(text)), std::move(source));
}

void CsvReader::read_header() {
  if (!read_line() || blank(buf_)) {
    throw_input_error(path_, 1, 0, "empty file (expected a header line of column names)");
  }
  line_ = 1;
  // A UTF-8 byte order mark would otherwise become part of the first column name.
  if (buf_.size() >= 3 && buf_.compare(0, 3, "\xEF\xBB\xBF") == 0) buf_.erase(0, 3);
  split();
  for (const auto n : fields_) {
    if (!n.empty() && has_column(n)) {
      fail_row(fmt::format("column '{}' appears twice (expected each column once)", n));
    }
    header_.emplace_back(n);
  }
  fields_.reserve(header_.size());
}

bool CsvReader::has_column(std::string_view name) const {
  return std::find(header_.begin(), header_.end(), name) != header_.end();
}

std::size_t CsvReader::column(std::string_view name, std::string_view expected) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  throw_input_error(path_, 1, 0,
                    fmt::format("missing column '{}' (expected columns: {})", name, expected));
}

bool CsvReader::read_line() {
  if (!read_csv_line(*in_, buf_, path_, physical_ + 1)) return false;
  line_ = ++physical_;
  if (!quote_open(buf_)) return true;
  // A quoted field holds line breaks: the record goes on until its quotes close.
  bool open = true;
  while (open) {
    if (!read_csv_line(*in_, more_, path_, physical_ + 1)) {
      fail_row("a quoted field is not closed (expected a closing '\"')");
    }
    ++physical_;
    if (buf_.size() + more_.size() >= kMaxCsvLineBytes) {
      throw_input_error(path_, static_cast<int>(physical_), 0,
                        fmt::format("a quoted record longer than {} bytes (expected a closing "
                                    "'\"')",
                                    kMaxCsvLineBytes));
    }
    if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
    buf_ += '\n';
    buf_ += more_;
    open = quote_open(more_) != open;
  }
  return true;
}

void CsvReader::split() {
  fields_.clear();
  const std::string_view text = buf_;
  if (text.find('"') == std::string_view::npos) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = text.find(',', start);
      if (comma == std::string_view::npos) {
        fields_.push_back(trim(text.substr(start)));
        return;
      }
      fields_.push_back(trim(text.substr(start, comma - start)));
      start = comma + 1;
    }
  }
  // Quotes: decode each field into decoded_ (text outside quotes trimmed at the field's ends,
  // text inside kept as it is), then view the pieces once decoded_ no longer grows.
  decoded_.clear();
  ends_.clear();
  std::size_t field_start = 0;
  std::size_t keep = 0;  // decoded_ up to here holds quoted text, which trimming must not cut
  bool quoted = false;
  auto end_field = [&] {
    while (decoded_.size() > std::max(keep, field_start) && space(decoded_.back())) {
      decoded_.pop_back();
    }
    ends_.push_back(decoded_.size());
    field_start = keep = decoded_.size();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        decoded_ += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
        keep = decoded_.size();
      } else {
        decoded_ += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      end_field();
    } else if (!(space(c) && decoded_.size() == field_start)) {
      decoded_ += c;
    }
  }
  end_field();
  std::size_t start = 0;
  for (const std::size_t end : ends_) {
    fields_.push_back(std::string_view(decoded_).substr(start, end - start));
    start = end;
  }
}

bool CsvReader::next_row() {
  while (read_line()) {
    if (blank(buf_)) continue;
    split();
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
