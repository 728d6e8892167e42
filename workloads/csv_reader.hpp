#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// Streams a comma-separated file one row at a time, finding columns by header name. Holds one
// line and one row's field offsets, whatever the file size. Fields are not quoted-aware beyond
// stripping a pair of surrounding quotes (trace files hold numbers and timestamps only).
// Invariant: line() is the 1-based line number of the row last returned by next_row(), so row
// errors read "file:LINE: …". A line longer than kMaxCsvLineBytes is an InputError naming it (a
// file with no newline is not read whole). Not thread-safe.
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;

// Reads one line of `in` (without its '\n') into `line`, at most kMaxCsvLineBytes of it: false at
// end of file with nothing read; a longer line throws InputError "path:LINE: a line longer than …"
// (`line_number` is the number of the line being read).
bool read_csv_line(std::istream& in, std::string& line, const std::string& path,
                   std::int64_t line_number);

class CsvReader {
 public:
  // Opens `path` and reads its header (line 1). Throws InputError when the file cannot be opened
  // or has no header.
  explicit CsvReader(std::string path);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  bool has_column(std::string_view name) const;
  // Index of the column called `name`; otherwise an InputError "file:1: missing column 'x'
  // (expected columns: …)" with `expected` listing what the format needs.
  std::size_t column(std::string_view name, std::string_view expected) const;

  // Reads the next row, skipping blank lines; false at end of file. A row whose field count
  // differs from the header's is an InputError naming its line.
  bool next_row();
  std::int64_t line() const { return line_; }
  // Field `index` of the current row, without surrounding spaces or quotes.
  std::string_view field(std::size_t index) const;

  // Throws "file:LINE: message" for the current row.
  [[noreturn]] void fail_row(const std::string& message) const;
  // Throws "file:LINE: column 'name': expected …, got 'text'" for field `index` of the row.
  [[noreturn]] void fail_field(std::size_t index, std::string_view expected) const;

 private:
  void split(std::string_view text, std::vector<std::string_view>& out) const;
  // Reads the next line (without its '\n') into buf_; false at end of file.
  bool read_line();

  std::string path_;
  std::ifstream in_;
  std::string buf_;
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;  // views into buf_, reused row to row
  std::int64_t line_ = 0;
};

}  // namespace servesim
