#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "sim/buffered_file.hpp"
#include "sim/records.hpp"

namespace servesim {

// Streams engine steps as a Chrome / Perfetto JSON trace (open it in ui.perfetto.dev or
// chrome://tracing): {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
// Each step is a complete event ("ph": "X") on pid = replica id, tid = 0, with ts/dur in
// microseconds printed with 3 decimals from integer ns, named "prefill 512 + decode 37" and
// carrying args {prefill_tokens, prefills, decodes, kv_blocks, preempted}. add_replica() writes
// the process_name ("replica 0 (h200)") and process_sort_index metadata of one replica.
// Invariants: at most max_events steps are written; later steps are only counted, and close()
// writes otherData {"steps", "steps_written", "steps_omitted", "max_events"}. Events appear in
// call order and nothing else varies, so identical calls give identical bytes. The file is
// written as it goes (memory stays flat); it is valid JSON only after close().
// Errors opening or writing throw InputError naming the path; the destructor closes and swallows
// errors (call close() to see them).
// Threading: one thread per writer.
class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(const std::string& path, std::int64_t max_events = 1'000'000);
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Names replica `replica` "replica <id> (<label>)" ("replica <id>" when label is empty).
  void add_replica(std::int32_t replica, std::string_view label);
  void add_step(const StepRecord& step);
  void close();  // idempotent; add_*() after close() throws

  std::int64_t steps() const { return steps_; }
  std::int64_t steps_written() const { return steps_ < max_events_ ? steps_ : max_events_; }
  std::int64_t steps_omitted() const { return steps_ - steps_written(); }

 private:
  void begin_event();

  std::int64_t max_events_;
  std::int64_t steps_ = 0;
  bool first_event_ = true;
  BufferedFile out_;
};

}  // namespace servesim
