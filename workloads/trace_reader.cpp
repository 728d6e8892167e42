#include "workloads/trace_reader.hpp"

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "workloads/csv_fields.hpp"

namespace servesim {
namespace {

constexpr std::string_view kVidurColumns = "arrived_at, num_prefill_tokens, num_decode_tokens";
constexpr std::string_view kAzureColumns = "TIMESTAMP, ContextTokens, GeneratedTokens";
constexpr std::string_view kMeasuredColumns =
    "arrival_time_s, input_tokens, output_tokens (has_error optional)";

}  // namespace

std::string_view trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::kVidur:
      return "vidur";
    case TraceFormat::kAzure:
      return "azure";
    case TraceFormat::kMeasured:
      return "measured";
  }
  return "?";
}

TraceReader::TraceReader(std::string path, TraceFormat format) : csv_(std::move(path)) {
  switch (format) {
    case TraceFormat::kVidur:
      time_kind_ = TimeKind::kSeconds;
      time_col_ = csv_.column("arrived_at", kVidurColumns);
      prompt_col_ = csv_.column("num_prefill_tokens", kVidurColumns);
      output_col_ = csv_.column("num_decode_tokens", kVidurColumns);
      break;
    case TraceFormat::kAzure:
      time_kind_ = TimeKind::kDateTime;
      time_col_ = csv_.column("TIMESTAMP", kAzureColumns);
      prompt_col_ = csv_.column("ContextTokens", kAzureColumns);
      output_col_ = csv_.column("GeneratedTokens", kAzureColumns);
      break;
    case TraceFormat::kMeasured:
      time_kind_ = TimeKind::kSeconds;
      time_col_ = csv_.column("arrival_time_s", kMeasuredColumns);
      prompt_col_ = csv_.column("input_tokens", kMeasuredColumns);
      output_col_ = csv_.column("output_tokens", kMeasuredColumns);
      if (csv_.has_column("has_error")) error_col_ = csv_.column("has_error", kMeasuredColumns);
      break;
  }
  if (csv_.has_column("slo_class")) slo_col_ = csv_.column("slo_class", "");
  if (csv_.has_column("adapter")) adapter_col_ = csv_.column("adapter", "");
}

TraceReader TraceReader::lengths_only(std::string path) {
  TraceReader r{CsvReader(std::move(path))};
  const std::pair<std::string_view, std::string_view> kPairs[] = {
      {"num_prefill_tokens", "num_decode_tokens"},
      {"ContextTokens", "GeneratedTokens"},
      {"input_tokens", "output_tokens"},
  };
  for (const auto& [prompt, output] : kPairs) {
    if (r.csv_.has_column(prompt) && r.csv_.has_column(output)) {
      r.prompt_col_ = r.csv_.column(prompt, "");
      r.output_col_ = r.csv_.column(output, "");
      if (r.csv_.has_column("has_error")) r.error_col_ = r.csv_.column("has_error", "");
      return r;
    }
  }
  for (const auto& [prompt, output] : kPairs) {  // half a pair: name the missing half
    if (r.csv_.has_column(prompt) != r.csv_.has_column(output)) {
      throw_input_error(r.path(), 1, 0,
                        fmt::format("column '{}' without '{}' (expected both length columns)",
                                    r.csv_.has_column(prompt) ? prompt : output,
                                    r.csv_.has_column(prompt) ? output : prompt));
    }
  }
  throw_input_error(r.path(), 1, 0,
                    "no length columns (expected columns: num_prefill_tokens, num_decode_tokens; "
                    "or ContextTokens, GeneratedTokens; or input_tokens, output_tokens)");
}

std::int32_t TraceReader::tokens(std::size_t column, bool& zero) {
  const auto v = parse_token_count(csv_.field(column));
  if (!v) csv_.fail_field(column, "a whole token count ≥ 0");
  zero = *v == 0;
  return zero ? 1 : *v;
}

bool TraceReader::next(TraceRow& row) {
  if (!csv_.next_row()) return false;
  row.arrival = 0;
  if (time_kind_ == TimeKind::kSeconds) {
    const auto t = parse_seconds_ns(csv_.field(time_col_));
    if (!t) csv_.fail_field(time_col_, "a time in seconds ≥ 0");
    row.arrival = *t;
  } else if (time_kind_ == TimeKind::kDateTime) {
    const auto t = parse_datetime_ns(csv_.field(time_col_));
    if (!t) {
      csv_.fail_field(time_col_,
                      fmt::format("a date-time 'YYYY-MM-DD HH:MM:SS.fffffff' in the years {}–{}",
                                  kFirstDateTimeYear, kLastDateTimeYear));
    }
    if (!origin_) origin_ = *t;
    // Both lie within int64 nanoseconds but their difference may not: subtract unsigned (exact
    // when t ≥ origin) and bound it by the horizon before it becomes a SimTime.
    if (*t >= *origin_) {
      const auto since_first =
          static_cast<std::uint64_t>(*t) - static_cast<std::uint64_t>(*origin_);
      if (since_first > static_cast<std::uint64_t>(kSimHorizon)) {
        csv_.fail_field(time_col_, fmt::format("a date-time at most {:.0e} s (the simulated-time "
                                               "horizon) after the first row's",
                                               kSimHorizonS));
      }
      row.arrival = static_cast<SimTime>(since_first);
    } else {
      row.arrival = -1;  // earlier than the first row: reported below as out of order
    }
  }
  if (time_kind_ != TimeKind::kNone) {
    if (counts_.rows > 0 && row.arrival < previous_) {
      csv_.fail_row(fmt::format(
          "column '{}': '{}' is earlier than the previous row (expected rows sorted by arrival)",
          csv_.header()[time_col_], csv_.field(time_col_)));
    }
    previous_ = row.arrival;
  }
  row.prompt_tokens = tokens(prompt_col_, row.zero_prompt);
  row.output_tokens = tokens(output_col_, row.zero_output);
  if (row.zero_prompt) ++counts_.zero_prompt_rows;
  if (row.zero_output) ++counts_.zero_output_rows;
  row.error = false;
  if (error_col_ != kNoColumn) {
    const auto e = parse_flag(csv_.field(error_col_));
    if (!e) csv_.fail_field(error_col_, "0 or 1");
    row.error = *e;
    if (row.error && counts_.error_rows++ == 0) counts_.first_error_line = csv_.line();
  }
  if (slo_col_ != kNoColumn) {
    row.slo_class = csv_.field(slo_col_);
  } else {
    row.slo_class.clear();
  }
  row.adapter = -1;
  if (adapter_col_ != kNoColumn) {
    const std::string_view a = csv_.field(adapter_col_);
    if (!a.empty() && a != "-1") {
      const auto id = parse_token_count(a);
      if (!id)
        csv_.fail_field(adapter_col_, "an adapter id ≥ 0, or -1 or nothing for the base model");
      row.adapter = *id;
    }
  }
  ++counts_.rows;
  return true;
}

}  // namespace servesim
