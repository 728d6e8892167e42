#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

// The longest line (or quoted record) a CSV file may hold: a file with no newline is an error,
// not read whole into memory.
inline constexpr std::size_t kMaxCsvLineBytes = std::size_t{1} << 20;

// Reads one line of `in` (without its '\n') into `line`, at most kMaxCsvLineBytes of it: false at
// end of file with nothing read; a longer line throws InputError "path:LINE: a line longer than …"
// (`line_number` is the number of the line being read).
bool read_csv_line(std::istream& in, std::string& line, const std::string& path,
                   std::int64_t line_number);

// Streams a comma-separated file one record at a time, finding columns by header name; every
// CSV the project reads (traces, profiles, measured runs) goes through it, so they share one set
// of rules (RFC 4180 plus leniency for hand-edited files):
// - a field may be quoted; a quoted field may hold commas, doubled quotes ("") and newlines;
// - spaces and tabs around a field, outside its quotes, are dropped; so is a line's '\r';
// - blank lines are skipped; a UTF-8 byte order mark before the header is dropped;
// - every record has as many fields as the header, and no column name appears twice.
// Invariant: line() is the 1-based line on which the record last returned by next_row() starts,
// so errors read "file:LINE: …". Holds one record whatever the file size. Not thread-safe.
class CsvReader {
 public:
  // Opens `path` and reads its header. Throws InputError when the file cannot be opened (`what`
  // says what it should have been) or has no header.
  explicit CsvReader(std::string path, std::string_view what = "a CSV file");
  // Reads CSV text held in memory; errors name `source`.
  static CsvReader from_text(std::string text, std::string source);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  bool has_column(std::string_view name) const;
  // Index of the column called `name`; otherwise an InputError "file:1: missing column 'x'
  // (expected columns: …)" with `expected` listing what the format needs.
  std::size_t column(std::string_view name, std::string_view expected) const;

  // Reads the next record; false at end of file. A record whose field count differs from the
  // header's is an InputError naming its line.
  bool next_row();
  std::int64_t line() const { return line_; }
  std::size_t size() const { return fields_.size(); }
  // Field `index` of the current record, without surrounding spaces or quotes.
  std::string_view field(std::size_t index) const;

  // Throws "file:LINE: message" for the current record.
  [[noreturn]] void fail_row(const std::string& message) const;
  // Throws "file:LINE: column 'name': expected …, got 'text'" for field `index` of the record.
  [[noreturn]] void fail_field(std::size_t index, std::string_view expected) const;

 private:
  CsvReader(std::unique_ptr<std::istream> in, std::string source);
  void read_header();
  // Reads the next physical line into buf_; false at end of file.
  bool read_line();
  // Splits buf_ (a whole record) into fields_, decoding quotes when it has any.
  void split();

  std::string path_;
  std::unique_ptr<std::istream> in_;
  std::string buf_;      // the current record's text
  std::string more_;     // a continuation line of a quoted record
  std::string decoded_;  // unquoted field text when the record has quotes
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;  // views into buf_ or decoded_, reused record to record
  std::vector<std::size_t> ends_;         // field ends in decoded_
  std::int64_t physical_ = 0;             // lines read so far
  std::int64_t line_ = 0;
};

}  // namespace servesim
