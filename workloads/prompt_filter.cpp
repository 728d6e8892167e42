#include "workloads/prompt_filter.hpp"

namespace servesim {

PromptFilterWorkload::PromptFilterWorkload(std::unique_ptr<Workload> inner, std::int32_t min_tokens,
                                           std::int32_t max_tokens)
    : inner_(std::move(inner)),
      loop_(inner_->closed_loop()),
      min_tokens_(min_tokens),
      max_tokens_(max_tokens) {}

std::optional<RequestSpec> PromptFilterWorkload::next() {
  while (auto r = inner_->next()) {
    if (r->prompt_tokens >= min_tokens_ && r->prompt_tokens <= max_tokens_) return r;
    ++left_out_;
    if (loop_ != nullptr) loop_->on_request_left_out(*r);
  }
  return std::nullopt;
}

}  // namespace servesim
