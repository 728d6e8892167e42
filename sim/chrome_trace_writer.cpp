#include "sim/chrome_trace_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
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

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw InputError(fmt::format("{}: {} ({})", path, what, std::strerror(errno)));
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path, std::int64_t max_events)
    : path_(path), max_events_(std::max<std::int64_t>(max_events, 0)) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(path, "cannot create trace file");
  buffer_ = "{\"traceEvents\":[";
}

ChromeTraceWriter::~ChromeTraceWriter() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw; close() reports
  }
}

void ChromeTraceWriter::begin_event() {
  if (file_ == nullptr) throw InputError(path_ + ": add to a closed trace writer");
  buffer_ += first_event_ ? "\n" : ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::add_replica(std::int32_t replica, std::string_view label) {
  const std::string name = label.empty() ? fmt::format("replica {}", replica)
                                         : fmt::format("replica {} ({})", replica, label);
  auto out = std::back_inserter(buffer_);
  begin_event();
  fmt::format_to(out, R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":{}}}}})",
                 replica, nlohmann::json(name).dump());
  begin_event();
  fmt::format_to(
      out,
      R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
      replica, replica);
  if (buffer_.size() >= (1u << 16)) write_out();
}

void ChromeTraceWriter::add_step(const StepRecord& step) {
  if (file_ == nullptr) throw InputError(path_ + ": add to a closed trace writer");
  ++steps_;
  if (steps_ > max_events_) return;
  // Hand-assembled rather than one fmt call: this runs once per engine step.
  begin_event();
  buffer_ += R"({"name":")";
  if (step.prefill_tokens > 0) {
    buffer_ += "prefill ";
    append_int(buffer_, step.prefill_tokens);
    if (step.num_decodes > 0) buffer_ += " + ";
  }
  if (step.num_decodes > 0) {
    buffer_ += "decode ";
    append_int(buffer_, step.num_decodes);
  }
  if (step.prefill_tokens <= 0 && step.num_decodes <= 0) buffer_ += "empty";
  buffer_ += R"(","ph":"X","pid":)";
  append_int(buffer_, step.replica);
  buffer_ += R"(,"tid":0,"ts":)";
  append_us(buffer_, step.start_ns);
  buffer_ += R"(,"dur":)";
  append_us(buffer_, step.duration_ns);
  buffer_ += R"(,"args":{"prefill_tokens":)";
  append_int(buffer_, step.prefill_tokens);
  buffer_ += R"(,"prefills":)";
  append_int(buffer_, step.num_prefills);
  buffer_ += R"(,"decodes":)";
  append_int(buffer_, step.num_decodes);
  buffer_ += R"(,"kv_blocks":)";
  append_int(buffer_, step.kv_blocks_used);
  buffer_ += R"(,"preempted":)";
  append_int(buffer_, step.preempted);
  buffer_ += "}}";
  if (buffer_.size() >= (1u << 16)) write_out();
}

void ChromeTraceWriter::write_out() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    fail(path_, "cannot write trace file");
  }
  buffer_.clear();
}

void ChromeTraceWriter::close() {
  if (file_ == nullptr) return;
  fmt::format_to(std::back_inserter(buffer_),
                 "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"steps\":{},\"steps_written\":{},"
                 "\"steps_omitted\":{},\"max_events\":{}}}}}\n",
                 steps_, steps_written(), steps_omitted(), max_events_);
  std::FILE* file = file_;
  bool written = true;
  try {
    write_out();
  } catch (...) {
    written = false;
  }
  file_ = nullptr;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) fail(path_, "cannot write trace file");
}

}  // namespace servesim
