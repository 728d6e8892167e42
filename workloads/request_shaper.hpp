#pragma once

#include <cstdint>

#include "sim/engine/request.hpp"
#include "workloads/random_source.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// Turns a raw (arrival, prompt, output) into the RequestSpec a workload yields, applying the
// shared options in a fixed order: the end conditions, the start offset, max_tokens clipping,
// then the shared-prefix group. Keeps the counts. Holds O(1) state. Not thread-safe.
//
// Clipping (max_tokens = M > 0): prompt = min(prompt, M - 1), then
// output = min(output, M - prompt), so prompt + output ≤ M and both stay ≥ 1.
// Prefix groups: each request draws a group uniformly from [0, prefix_groups) (own seed stream);
// its prefix is min(prefix_tokens, prompt) tokens. With prefix_by_prompt_length the group is the
// (clipped) prompt length and the prefix is the whole prompt.
class RequestShaper {
 public:
  RequestShaper(const WorkloadOptions& options, std::uint64_t seed);

  // False once num_requests requests have been yielded.
  bool has_room() const;
  // True when a request arriving `relative` ns after the start is before the end (duration_s).
  bool before_end(SimTime relative) const;
  // The request to yield; counts it.
  RequestSpec shape(SimTime relative, std::int32_t prompt, std::int32_t output);
  // The same for a request whose source names its shared prefix (group, tokens): the prefix is
  // min(prefix_tokens, prompt) after clipping; the shared_prefix option must be off.
  RequestSpec shape(SimTime relative, std::int32_t prompt, std::int32_t output,
                    std::int64_t prefix_group, std::int32_t prefix_tokens);

  const WorkloadOptions& options() const { return options_; }
  WorkloadCounts& counts() { return counts_; }
  const WorkloadCounts& counts() const { return counts_; }

 private:
  WorkloadOptions options_;
  RandomSource prefix_rng_;
  WorkloadCounts counts_;
};

}  // namespace servesim
