#include "workloads/mooncake_workload.hpp"

#include <algorithm>

#include "sim/config/input_error.hpp"

namespace servesim {

MooncakeWorkload::MooncakeWorkload(const std::string& path, const TraceRescale& rescale,
                                   const WorkloadOptions& options, std::uint64_t seed)
    : reader_(path), shaper_(options, seed) {
  MooncakeReader check(path);
  const TraceSpan span = scan_trace<MooncakeReader, MooncakeRow>(check, options.num_requests);
  rows_ = span.rows;
  if (rows_ == 0) {
    throw_input_error(path, 1, 0, "no requests (expected at least one JSON object line)");
  }
  scale_ = trace_time_scale(path, rescale, rows_, span.first, span.last);
}

std::optional<RequestSpec> MooncakeWorkload::next() {
  if (done_) return std::nullopt;
  MooncakeRow row;
  if (!shaper_.has_room() || !reader_.next(row) || !shaper_.before_end(scale_.apply(row.arrival))) {
    done_ = true;
    return std::nullopt;
  }
  if (row.zero_output) ++shaper_.counts().zero_output_rows;
  const std::int32_t override_tokens = shaper_.options().output_tokens_override;
  RequestSpec spec = shaper_.shape(scale_.apply(row.arrival), row.prompt_tokens,
                                   override_tokens > 0 ? override_tokens : row.output_tokens);
  const auto hashed =
      static_cast<std::int64_t>(row.hashes->chain.size()) * row.hashes->block_tokens;
  spec.prefix_group = -1;
  spec.prefix_tokens =
      static_cast<std::int32_t>(std::min<std::int64_t>(spec.prompt_tokens, hashed));
  spec.hashes = std::move(row.hashes);
  return spec;
}

}  // namespace servesim
