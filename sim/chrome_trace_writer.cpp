#include "sim/chrome_trace_writer.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/input_error.hpp"
#include "sim/time.hpp"

namespace servesim {

namespace {

void append_int(std::string& out, std::int64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

// Integer ns as decimal µs with exactly 3 places: 1234567 -> "1234.567", -5 -> "-0.005".
void append_us(std::string& out, SimTime ns) {
  if (ns < 0) out += '-';
  // Unsigned magnitude so INT64_MIN does not overflow.
  const std::uint64_t magnitude =
      ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const auto per_us = static_cast<std::uint64_t>(kNsPerUs);
  const fmt::format_int whole(magnitude / per_us);
  out.append(whole.data(), whole.size());
  const auto frac = static_cast<unsigned>(magnitude % per_us);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path, std::int64_t max_events)
    : max_events_(std::max<std::int64_t>(max_events, 0)), out_(path, "trace file") {
  out_.text() = "{\"traceEvents\":[";
}

ChromeTraceWriter::~ChromeTraceWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw; close() reports
  }
}

void ChromeTraceWriter::begin_event() {
  if (out_.closed()) throw InputError(out_.path() + ": add to a closed trace writer");
  out_.text() += first_event_ ? "\n" : ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::add_replica(std::int32_t replica, std::string_view label) {
  const std::string name = label.empty() ? fmt::format("replica {}", replica)
                                         : fmt::format("replica {} ({})", replica, label);
  auto out = std::back_inserter(out_.text());
  begin_event();
  fmt::format_to(out, R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":{}}}}})",
                 replica, nlohmann::json(name).dump());
  begin_event();
  fmt::format_to(
      out,
      R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
      replica, replica);
  out_.maybe_flush();
}

void ChromeTraceWriter::add_step(const StepRecord& step) {
  if (out_.closed()) throw InputError(out_.path() + ": add to a closed trace writer");
  ++steps_;
  if (steps_ > max_events_) return;
  // Hand-assembled rather than one fmt call: this runs once per engine step.
  begin_event();
  std::string& b = out_.text();
  b += R"({"name":")";
  if (step.prefill_tokens > 0) {
    b += "prefill ";
    append_int(b, step.prefill_tokens);
    if (step.num_decodes > 0) b += " + ";
  }
  if (step.num_decodes > 0) {
    b += "decode ";
    append_int(b, step.num_decodes);
  }
  if (step.prefill_tokens <= 0 && step.num_decodes <= 0) b += "empty";
  b += R"(","ph":"X","pid":)";
  append_int(b, step.replica);
  b += R"(,"tid":0,"ts":)";
  append_us(b, step.start_ns);
  b += R"(,"dur":)";
  append_us(b, step.duration_ns);
  b += R"(,"args":{"prefill_tokens":)";
  append_int(b, step.prefill_tokens);
  b += R"(,"prefills":)";
  append_int(b, step.num_prefills);
  b += R"(,"decodes":)";
  append_int(b, step.num_decodes);
  b += R"(,"kv_blocks":)";
  append_int(b, step.kv_blocks_used);
  b += R"(,"preempted":)";
  append_int(b, step.preempted);
  b += "}}";
  out_.maybe_flush();
}

void ChromeTraceWriter::close() {
  if (out_.closed()) return;
  fmt::format_to(std::back_inserter(out_.text()),
                 "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"steps\":{},\"steps_written\":{},"
                 "\"steps_omitted\":{},\"max_events\":{}}}}}\n",
                 steps_, steps_written(), steps_omitted(), max_events_);
  out_.close();
}

}  // namespace servesim
