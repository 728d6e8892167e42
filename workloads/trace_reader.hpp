#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/util/csv_reader.hpp"

namespace servesim {

// The trace formats with arrival times.
//   vidur:    arrived_at,num_prefill_tokens,num_decode_tokens          (seconds)
//   azure:    TIMESTAMP,ContextTokens,GeneratedTokens                   (date-times; relative to
//                                                                        the first row)
//   measured: index,arrival_time_s,input_tokens,output_tokens,has_error,… (seconds)
enum class TraceFormat { kVidur, kAzure, kMeasured };

std::string_view trace_format_name(TraceFormat format);

// One validated row. Token counts are ≥ 1 (zeros are raised to 1 and counted).
struct TraceRow {
  SimTime arrival = 0;  // ns from the trace's time origin; 0 when the file has no arrivals
  std::int32_t prompt_tokens = 1;
  std::int32_t output_tokens = 1;
  bool error = false;        // measured traces: the request failed in the measured run
  bool zero_prompt = false;  // the file said 0 prompt tokens
  bool zero_output = false;  // the file said 0 output tokens
  std::string slo_class;     // the optional slo_class column (a class name; "" = none given)
  // The optional adapter column (multi-LoRA): a whole adapter id ≥ 0, or -1 or an empty field for
  // the base model; -1 without the column.
  std::int32_t adapter = -1;
};

// What a reader has seen so far.
struct TraceCounts {
  std::int64_t rows = 0;
  std::int64_t zero_prompt_rows = 0;  // prompt count 0 in the file, raised to 1
  std::int64_t zero_output_rows = 0;  // output count 0 in the file, raised to 1
  std::int64_t error_rows = 0;        // has_error set (measured traces)
  std::int64_t first_error_line = 0;  // the line of the first such row (0: none)
};

// Streams the rows of a trace file, validating each: numbers must parse exactly, token counts
// be whole and non-negative, arrivals finite, non-negative and non-decreasing. A bad row throws
// InputError "file:LINE: …"; nothing is skipped. Columns are found by header name, so extra
// columns are fine. Holds O(1) memory. Not thread-safe.
class TraceReader {
 public:
  // A trace with arrivals, in `format`. Opens the file and checks the header.
  TraceReader(std::string path, TraceFormat format);
  // A file read for lengths only; its columns decide the format: num_prefill_tokens and
  // num_decode_tokens (Vidur/etalon length files and Vidur traces), ContextTokens and
  // GeneratedTokens (Azure), or input_tokens and output_tokens (measured). Arrivals are ignored.
  static TraceReader lengths_only(std::string path);

  // The next row, or false at end of file.
  bool next(TraceRow& row);
  const TraceCounts& counts() const { return counts_; }
  // Whether the file has an slo_class column.
  bool has_slo_class() const { return slo_col_ != kNoColumn; }
  // Fails on the row last read, at its slo_class field.
  [[noreturn]] void fail_slo_class(const std::string& expected) const {
    csv_.fail_field(slo_col_, expected);
  }
  // Whether the file has an adapter column; fails on the row last read, at its adapter field.
  bool has_adapter() const { return adapter_col_ != kNoColumn; }
  [[noreturn]] void fail_adapter(const std::string& expected) const {
    csv_.fail_field(adapter_col_, expected);
  }
  const std::string& path() const { return csv_.path(); }
  std::int64_t line() const { return csv_.line(); }

 private:
  enum class TimeKind { kNone, kSeconds, kDateTime };
  static constexpr std::size_t kNoColumn = static_cast<std::size_t>(-1);

  explicit TraceReader(CsvReader csv) : csv_(std::move(csv)) {}
  std::int32_t tokens(std::size_t column, bool& zero);

  CsvReader csv_;
  TimeKind time_kind_ = TimeKind::kNone;
  std::size_t time_col_ = kNoColumn;
  std::size_t prompt_col_ = kNoColumn;
  std::size_t output_col_ = kNoColumn;
  std::size_t error_col_ = kNoColumn;
  std::size_t slo_col_ = kNoColumn;
  std::size_t adapter_col_ = kNoColumn;
  std::optional<SimTime> origin_;  // date-time of the first row (azure)
  SimTime previous_ = 0;
  TraceCounts counts_;
};

}  // namespace servesim
