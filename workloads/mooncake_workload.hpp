#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/engine/workload.hpp"
#include "workloads/mooncake_reader.hpp"
#include "workloads/request_shaper.hpp"
#include "workloads/trace_workload.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// Replays a Mooncake trace (`trace: {format: mooncake}`) line by line, as TraceWorkload replays a
// CSV trace: the constructor streams the file once to validate every line it will replay (up to
// num_requests) and to measure its rate; next() streams it again; arrivals are rescaled exactly
// (qps or time_scale) and offset by start_s. Each request carries its prompt's hash chain
// (RequestSpec::hashes) over its first min(prompt, 512 · hash blocks) tokens, after max_tokens
// clipping, so the prefix cache shares exactly the blocks whose hash ids agree. Holds O(1)
// memory beyond the request it yields. Not thread-safe.
class MooncakeWorkload final : public Workload {
 public:
  MooncakeWorkload(const std::string& path, const TraceRescale& rescale,
                   const WorkloadOptions& options, std::uint64_t seed);

  std::string_view name() const override { return "trace"; }
  std::optional<RequestSpec> next() override;
  std::optional<std::int64_t> expected_requests() const override { return rows_; }

  std::int64_t rows() const { return rows_; }
  double file_qps() const { return scale_.file_qps; }
  const WorkloadCounts& counts() const { return shaper_.counts(); }

 private:
  MooncakeReader reader_;
  RequestShaper shaper_;
  std::int64_t rows_ = 0;
  TraceTimeScale scale_;
  bool done_ = false;
};

}  // namespace servesim
