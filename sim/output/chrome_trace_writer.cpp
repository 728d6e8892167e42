#include "sim/output/chrome_trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/input_error.hpp"
#include "sim/engine/time.hpp"

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

// ,"key":value — the args of an event, appended one by one.
void append_arg(std::string& out, std::string_view key, std::int64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  append_int(out, value);
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path, std::int64_t max_events,
                                     std::int64_t max_requests)
    : max_events_(std::max<std::int64_t>(max_events, 0)),
      max_requests_(std::max<std::int64_t>(max_requests, 0)),
      out_(path, "trace file") {
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
  append_arg(b, "prefills", step.num_prefills);
  append_arg(b, "decodes", step.num_decodes);
  append_arg(b, "kv_blocks", step.kv_blocks_used);
  append_arg(b, "preempted", step.preempted);
  append_arg(b, "running", step.running);
  append_arg(b, "waiting", step.waiting);
  b += "}}";
  // Counter tracks of the replica: set at the step's start; its tokens drop to zero at the end.
  const auto counter = [&](const char* name, SimTime ts, const char* k1, std::int64_t v1,
                           const char* k2, std::int64_t v2) {
    begin_event();
    b += R"({"name":")";
    b += name;
    b += R"(","ph":"C","pid":)";
    append_int(b, step.replica);
    b += R"(,"ts":)";
    append_us(b, ts);
    b += R"(,"args":{")";
    b += k1;
    b += R"(":)";
    append_int(b, v1);
    if (k2 != nullptr) append_arg(b, k2, v2);
    b += "}}";
  };
  counter("KV blocks", step.start_ns, "used", step.kv_blocks_used, nullptr, 0);
  counter("requests", step.start_ns, "running", step.running, "waiting", step.waiting);
  counter("batch tokens", step.start_ns, "prefill", step.prefill_tokens, "decode",
          step.num_decodes);
  counter("batch tokens", step.start_ns + step.duration_ns, "prefill", 0, "decode", 0);
  out_.maybe_flush();
}

void ChromeTraceWriter::add_request(const RequestRecord& r) {
  if (out_.closed()) throw InputError(out_.path() + ": add to a closed trace writer");
  ++requests_;
  if (requests_ > max_requests_) return;
  auto out = std::back_inserter(out_.text());
  if (requests_ == 1) {
    begin_event();
    fmt::format_to(out,
                   R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":)"
                   R"("requests"}}}})",
                   kRequestsPid);
    begin_event();
    fmt::format_to(
        out,
        R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
        kRequestsPid, kRequestsPid);
  }
  begin_event();
  fmt::format_to(out,
                 R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":)"
                 R"x("request {} ({} + {} tokens)"}}}})x",
                 kRequestsPid, r.id, r.id, r.prompt_tokens, r.output_tokens);
  std::string& b = out_.text();
  const auto slice = [&](const char* name, SimTime from, SimTime to) {
    if (from < 0 || to <= from) return;  // never reached, or no time in it
    begin_event();
    b += R"({"name":")";
    b += name;
    b += R"(","ph":"X","pid":)";
    append_int(b, kRequestsPid);
    b += R"(,"tid":)";
    append_int(b, r.id);
    b += R"(,"ts":)";
    append_us(b, from);
    b += R"(,"dur":)";
    append_us(b, to - from);
    b += R"(,"args":{"prompt_tokens":)";
    append_int(b, r.prompt_tokens);
    append_arg(b, "output_tokens", r.output_tokens);
    append_arg(b, "replica", r.replica);
    append_arg(b, "preemptions", r.preemptions);
    b += "}}";
  };
  if (r.rejected != 0) {
    begin_event();
    b += R"({"name":"rejected","ph":"i","s":"t","pid":)";
    append_int(b, kRequestsPid);
    b += R"(,"tid":)";
    append_int(b, r.id);
    b += R"(,"ts":)";
    append_us(b, r.arrival_ns);
    b += "}";
    out_.maybe_flush();
    return;
  }
  slice("queued", r.arrival_ns, r.first_scheduled_ns);
  slice("prefill", r.first_scheduled_ns, r.first_token_ns);
  slice("decode", r.first_token_ns, r.finished_ns);
  // Arrows from the request to the steps that served it: the one that first scheduled it (it
  // starts then) and the one that produced its last token (it ends then: 1 ns before is inside).
  const auto flow = [&](SimTime at) {
    const std::int64_t id = ++flows_;
    for (const bool start : {true, false}) {
      begin_event();
      b += start ? R"({"name":"served by","cat":"request","ph":"s","id":)"
                 : R"({"name":"served by","cat":"request","ph":"f","bp":"e","id":)";
      append_int(b, id);
      b += R"(,"pid":)";
      append_int(b, start ? kRequestsPid : r.replica);
      b += R"(,"tid":)";
      append_int(b, start ? r.id : 0);
      b += R"(,"ts":)";
      append_us(b, at);
      b += "}";
    }
  };
  if (r.first_scheduled_ns >= 0) flow(r.first_scheduled_ns);
  if (r.finished_ns > r.first_scheduled_ns) flow(r.finished_ns - 1);
  out_.maybe_flush();
}

void ChromeTraceWriter::add_transfer(const TransferRecord& t) {
  if (out_.closed()) throw InputError(out_.path() + ": add to a closed trace writer");
  ++transfers_;
  if (transfers_ > max_requests_) return;
  auto out = std::back_inserter(out_.text());
  if (std::find(transfer_tracks_.begin(), transfer_tracks_.end(), t.to_replica) ==
      transfer_tracks_.end()) {
    transfer_tracks_.push_back(t.to_replica);
    begin_event();
    fmt::format_to(out,
                   R"({{"name":"thread_name","ph":"M","pid":{},"tid":1,"args":{{"name":)"
                   R"("KV transfers in"}}}})",
                   t.to_replica);
  }
  std::string& b = out_.text();
  begin_event();
  b += R"({"name":"KV of request )";
  append_int(b, t.request);
  b += " from replica ";
  append_int(b, t.from_replica);
  b += R"(","ph":"X","pid":)";
  append_int(b, t.to_replica);
  b += R"(,"tid":1,"ts":)";
  append_us(b, t.start_ns);
  b += R"(,"dur":)";
  append_us(b, t.end_ns - t.start_ns);
  b += R"(,"args":{"request":)";
  append_int(b, t.request);
  append_arg(b, "from_replica", t.from_replica);
  append_arg(b, "tokens", t.tokens);
  append_arg(b, "bytes", std::llround(t.bytes));
  b += R"(,"waited_us":)";
  append_us(b, t.start_ns - t.queued_ns);
  b += "}}";
  out_.maybe_flush();
}

void ChromeTraceWriter::close() {
  if (out_.closed()) return;
  fmt::format_to(std::back_inserter(out_.text()),
                 "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"steps\":{},\"steps_written\":{},"
                 "\"steps_omitted\":{},\"max_events\":{},\"requests\":{},"
                 "\"requests_written\":{},\"max_requests\":{},\"transfers\":{},"
                 "\"transfers_written\":{}}}}}\n",
                 steps_, steps_written(), steps_omitted(), max_events_, requests_,
                 requests_written(), max_requests_, transfers_, transfers_written());
  out_.close();
}

}  // namespace servesim
