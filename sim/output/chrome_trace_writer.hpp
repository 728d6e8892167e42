#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/records.hpp"
#include "sim/output/buffered_file.hpp"

namespace servesim {

// Streams a run as a Chrome / Perfetto JSON trace (open it in ui.perfetto.dev or
// chrome://tracing): {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
// Times are microseconds printed with 3 decimals from integer ns.
// - Each step is a complete event ("ph": "X") on pid = replica id, tid = 0, named
//   "prefill 512 + decode 37", with args {prefill_tokens, prefills, decodes, kv_blocks,
//   preempted, running, waiting}, and three counter tracks of the replica ("ph": "C"): "KV blocks"
//   {used}, "requests" {running, waiting} and "batch tokens" {prefill, decode}, the last set to
//   zero when the step ends (an idle replica runs no tokens).
// - Each request (add_request, up to max_requests) is a track of its own in the "requests"
//   process (pid kRequestsPid, tid = request id): complete events "queued" (arrival → first
//   scheduled), "prefill" (→ first token) and "decode" (→ last token), and two flow arrows
//   ("ph": "s"/"f", bound to the enclosing slice) from it to the step that first scheduled it and
//   to the step that produced its last token. A rejected request is an instant event.
// - Each KV transfer of disaggregated serving (add_transfer, up to max_requests) is a complete
//   event on its decode replica's "KV transfers in" track (pid = that replica, tid 1) from the
//   start of the copy to its end, named "KV of request 12 from replica 0", with args {request,
//   from_replica, tokens, bytes, waited_us: the time it waited for decode room}.
// add_replica() writes the process_name ("replica 0 (h200)") and process_sort_index metadata.
// Invariants: at most max_events steps and max_requests requests are written; later ones are only
// counted, and close() writes otherData {"steps", "steps_written", "steps_omitted", "max_events",
// "requests", "requests_written", "max_requests", "transfers", "transfers_written"}. Events appear
// in call order and nothing else varies, so identical calls give identical bytes. The file is
// written as it goes (memory stays flat); it is valid JSON only after close(). Errors opening or
// writing throw InputError naming the path; the destructor closes and swallows errors (call close()
// to see them). Threading: one thread per writer.
class ChromeTraceWriter {
 public:
  // The pid of the "requests" process (replica ids are small).
  static constexpr std::int32_t kRequestsPid = 1'000'000;

  explicit ChromeTraceWriter(const std::string& path, std::int64_t max_events = 1'000'000,
                             std::int64_t max_requests = 1000);
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Names replica `replica` "replica <id> (<label>)" ("replica <id>" when label is empty).
  void add_replica(std::int32_t replica, std::string_view label);
  void add_step(const StepRecord& step);
  // A finished or rejected request (its record holds every time the tracks need).
  void add_request(const RequestRecord& request);
  // An ended KV transfer.
  void add_transfer(const TransferRecord& transfer);
  void close();  // idempotent; add_*() after close() throws

  std::int64_t steps() const { return steps_; }
  std::int64_t steps_written() const { return steps_ < max_events_ ? steps_ : max_events_; }
  std::int64_t steps_omitted() const { return steps_ - steps_written(); }
  std::int64_t requests() const { return requests_; }
  std::int64_t requests_written() const {
    return requests_ < max_requests_ ? requests_ : max_requests_;
  }
  std::int64_t transfers() const { return transfers_; }
  std::int64_t transfers_written() const {
    return transfers_ < max_requests_ ? transfers_ : max_requests_;
  }

 private:
  void begin_event();

  std::int64_t max_events_;
  std::int64_t max_requests_;
  std::int64_t steps_ = 0;
  std::int64_t requests_ = 0;
  std::int64_t flows_ = 0;  // flow ids handed out
  std::int64_t transfers_ = 0;
  std::vector<std::int32_t> transfer_tracks_;  // decode replicas whose transfer track is named
  bool first_event_ = true;
  BufferedFile out_;
};

}  // namespace servesim
