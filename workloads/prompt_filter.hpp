#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/workload.hpp"

namespace servesim {

// `workload.prompt_tokens: {min: A, max: B}`: keeps only the requests of another workload whose
// prompt (as that workload yields it, after max_tokens clipping) has A ≤ tokens ≤ B, with their
// arrival times unchanged: the stream one pool of a length split sees. num_requests and
// duration_s apply to the workload before the filter. The requests left out are counted, never
// silently dropped (summary.json workload_counts.left_out_by_prompt_tokens). Over a closed-loop
// workload (sessions, agentic) it forwards the closed-loop role, and a turn it leaves out counts
// as finished at its arrival (ClosedLoopWorkload::on_request_left_out): the session goes on, so
// the pool sees the turns of each session that fall in its range, and no session waits on a
// turn this pool never serves.
class PromptFilterWorkload : public Workload {
 public:
  PromptFilterWorkload(std::unique_ptr<Workload> inner, std::int32_t min_tokens,
                       std::int32_t max_tokens);

  std::string_view name() const override { return inner_->name(); }
  std::optional<RequestSpec> next() override;
  void set_slo_classes(const std::vector<std::string>& names) override {
    inner_->set_slo_classes(names);
  }

  ClosedLoopWorkload* closed_loop() override { return loop_; }
  bool benchmark_client() const override { return inner_->benchmark_client(); }

  const Workload& inner() const { return *inner_; }
  std::int64_t left_out() const { return left_out_; }

 private:
  std::unique_ptr<Workload> inner_;
  ClosedLoopWorkload* loop_;  // inner_'s closed-loop role, or nullptr
  std::int32_t min_tokens_;
  std::int32_t max_tokens_;
  std::int64_t left_out_ = 0;
};

}  // namespace servesim
