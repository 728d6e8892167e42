#include "workloads/synthetic_workload.hpp"

#include <utility>

namespace servesim {

SyntheticWorkload::SyntheticWorkload(const ArrivalSpec& arrivals, LengthSpec lengths,
                                     const WorkloadOptions& options, std::uint64_t seed,
                                     std::string arrival_where)
    : arrivals_(arrivals, seed, std::move(arrival_where)),
      lengths_(std::move(lengths), seed),
      shaper_(options, seed),
      expected_(options.num_requests) {}

std::optional<RequestSpec> SyntheticWorkload::next() {
  if (done_) return std::nullopt;
  if (!shaper_.has_room() || arrivals_.done()) {
    done_ = true;
    return std::nullopt;
  }
  const SimTime t = arrivals_.next();
  if (!shaper_.before_end(t)) {
    done_ = true;
    return std::nullopt;
  }
  const auto [prompt, output] = lengths_.next();
  if (lengths_.last_user() >= 0) {
    return shaper_.shape(t, prompt, output, lengths_.last_user(), prompt);
  }
  return shaper_.shape(t, prompt, output);
}

WorkloadCounts SyntheticWorkload::counts() const {
  WorkloadCounts c = shaper_.counts();
  if (const auto* pool = std::get_if<TraceLengths>(&lengths_.spec())) {
    c.zero_prompt_rows = pool->counts.zero_prompt_rows;
    c.zero_output_rows = pool->counts.zero_output_rows;
    c.error_rows = pool->counts.error_rows;
  }
  return c;
}

}  // namespace servesim
