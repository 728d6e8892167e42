#include "workloads/request_shaper.hpp"

#include <algorithm>

#include "sim/util/splitmix.hpp"

namespace servesim {

RequestShaper::RequestShaper(const WorkloadOptions& options, std::uint64_t seed)
    : options_(options), prefix_rng_(stream_seed(seed, 3)) {}

bool RequestShaper::has_room() const {
  return !options_.num_requests || counts_.yielded < *options_.num_requests;
}

bool RequestShaper::before_end(SimTime relative) const {
  return !options_.duration || relative < *options_.duration;
}

RequestSpec RequestShaper::shape(SimTime relative, std::int32_t prompt, std::int32_t output) {
  RequestSpec spec;
  spec.arrival = options_.start + relative;
  spec.prompt_tokens = prompt;
  spec.output_tokens = output;
  if (options_.max_tokens > 0) {
    const std::int32_t m = options_.max_tokens;
    const bool clipped = prompt > m - 1 || std::int64_t{prompt} + output > m;
    spec.prompt_tokens = std::min(prompt, m - 1);
    spec.output_tokens = std::min(output, m - spec.prompt_tokens);
    if (clipped) ++counts_.clipped_to_max_tokens;
  }
  if (options_.prefix_groups > 0) {
    spec.prefix_group = prefix_rng_.uniform_int(0, options_.prefix_groups - 1);
    spec.prefix_tokens = std::min(options_.prefix_tokens, spec.prompt_tokens);
  } else if (options_.prefix_by_prompt_length) {
    spec.prefix_group = spec.prompt_tokens;
    spec.prefix_tokens = spec.prompt_tokens;
  }
  ++counts_.yielded;
  return spec;
}

RequestSpec RequestShaper::shape(SimTime relative, std::int32_t prompt, std::int32_t output,
                                 std::int64_t prefix_group, std::int32_t prefix_tokens) {
  RequestSpec spec = shape(relative, prompt, output);
  spec.prefix_group = prefix_group;
  spec.prefix_tokens = std::min(prefix_tokens, spec.prompt_tokens);
  return spec;
}

}  // namespace servesim
