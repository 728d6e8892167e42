#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/workload.hpp"
#include "workloads/request_shaper.hpp"
#include "workloads/trace_reader.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// How a trace's arrival times are rescaled. kTimeScale multiplies every arrival by `value` (as
// Vidur's time_scale_factor: 2 = half the rate). kQps scales them so that the rows replayed
// arrive at a mean rate of `value` per second: (rows − 1) / (last − first arrival) = value.
// `where` is where the value was given ("file:line:col" of a config, or the --set flag): an
// error about the value (too high, too small, past the horizon) starts there and names the trace;
// empty, it starts with the trace's path.
struct TraceRescale {
  enum class Kind { kNone, kTimeScale, kQps };
  Kind kind = Kind::kNone;
  double value = 1.0;
  std::string where;
};

// The integer rescale of a trace whose `rows` replayed rows arrive from `first` to `last` (ns):
// arrivals become t · num / den, rounded to the nearest ns. Throws InputError for a value that
// cannot apply (too small, too high, past the horizon), starting at rescale.where.
struct TraceTimeScale {
  std::int64_t num = 1;
  std::int64_t den = 1;
  double file_qps = 0;  // the rows' mean rate in the file (0 when undefined)
  SimTime apply(SimTime t) const;
};
TraceTimeScale trace_time_scale(const std::string& path, const TraceRescale& rescale,
                                std::int64_t rows, SimTime first, SimTime last);

// A trace's validating pass: reads the rows `check` yields (every one it will replay, up to
// `max_rows` when set), so a bad row fails before simulated time 0, and returns their count and
// the span of their arrivals (trace_time_scale's inputs).
struct TraceSpan {
  std::int64_t rows = 0;
  SimTime first = 0;
  SimTime last = 0;
};
template <class Reader, class Row>
TraceSpan scan_trace(Reader& check, const std::optional<std::int64_t>& max_rows) {
  TraceSpan span;
  Row row;
  while ((!max_rows || span.rows < *max_rows) && check.next(row)) {
    if (span.rows == 0) span.first = row.arrival;
    span.last = row.arrival;
    ++span.rows;
  }
  return span;
}

// Replays a trace file row by row. The constructor streams the file once to validate every row
// it will replay (up to num_requests) and to measure its rate, so bad rows fail before
// simulated time 0; next() streams it again. Arrivals are the file's (Azure: relative to the
// first row), rescaled exactly in integer nanoseconds, plus start_s. Holds O(1) memory.
// Not thread-safe.
class TraceWorkload final : public Workload {
 public:
  TraceWorkload(const std::string& path, TraceFormat format, TraceRescale rescale,
                const WorkloadOptions& options, std::uint64_t seed);

  std::string_view name() const override { return "trace"; }
  std::optional<RequestSpec> next() override;
  std::optional<std::int64_t> expected_requests() const override { return rows_; }
  void set_slo_classes(const std::vector<std::string>& names) override;
  // With an adapter column: each row's adapter, checked against `count`.
  void set_lora_adapters(std::int32_t count) override { lora_adapters_ = count; }
  bool names_adapters() const override { return lora_adapters_ > 0 && reader_.has_adapter(); }

  // Rows the validating pass read (the whole file, or the first num_requests rows).
  std::int64_t rows() const { return rows_; }
  // The mean arrival rate of those rows in the file, before rescaling (0 when undefined).
  double file_qps() const { return file_qps_; }
  const WorkloadCounts& counts() const { return shaper_.counts(); }

 private:
  SimTime rescaled(SimTime t) const;

  TraceReader reader_;
  RequestShaper shaper_;
  std::int64_t rows_ = 0;
  double file_qps_ = 0;
  // Arrivals become t · scale_num_ / scale_den_, rounded to the nearest ns.
  std::int64_t scale_num_ = 1;
  std::int64_t scale_den_ = 1;
  bool done_ = false;
  std::vector<std::string> slo_classes_;  // the run's SLO class names (set_slo_classes)
  std::int32_t lora_adapters_ = 0;        // the run's adapters (set_lora_adapters); 0: none
};

}  // namespace servesim
