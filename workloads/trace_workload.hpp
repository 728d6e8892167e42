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
};

}  // namespace servesim
