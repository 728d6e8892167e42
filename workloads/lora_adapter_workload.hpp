#pragma once

#include <memory>
#include <vector>

#include "sim/config/lora_config.hpp"
#include "sim/engine/workload.hpp"
#include "workloads/random_source.hpp"

namespace servesim {

// Draws the LoRA adapter of each request of another workload (the run's `lora:` section): the
// base model (-1) with probability base_fraction, else adapter k ∈ [0, num_adapters) with
// probability ∝ 1 / (k + 1)^zipf_s, by inverse CDF over a table built once. The draws come from
// their own seeded stream, so the inner workload's arrivals and lengths are those of the same
// run without LoRA. A workload whose input names the adapter of each request (a trace's
// `adapter` column: Workload::names_adapters) keeps its own. A closed-loop workload's requests
// take their session's (or agent task's) adapter: every request of a session is served by one
// adapter, so a turn's prefix-cache hits on earlier turns stay valid (vLLM keys cached blocks by
// adapter too), and the draw comes from a stream seeded by the session id, so it does not depend
// on the order the fleet completes requests in, nor change when the engine hands a request back
// and it is yielded again. Its closed-loop role is the inner workload's. Deterministic for its
// seed; not thread-safe.
class LoraAdapterWorkload final : public Workload {
 public:
  LoraAdapterWorkload(std::unique_ptr<Workload> inner, const LoraConfig& config,
                      std::uint64_t seed);
  std::string_view name() const override { return inner_->name(); }
  std::optional<RequestSpec> next() override;
  std::optional<std::int64_t> expected_requests() const override {
    return inner_->expected_requests();
  }
  void set_slo_classes(const std::vector<std::string>& names) override {
    inner_->set_slo_classes(names);
  }
  ClosedLoopWorkload* closed_loop() override { return inner_->closed_loop(); }
  bool benchmark_client() const override { return inner_->benchmark_client(); }
  const Workload& inner() const { return *inner_; }
  // One draw (what next() gives a request of the inner workload).
  std::int32_t draw();
  // The adapter of every request of session `session` (what next() gives a closed-loop one).
  std::int32_t session_adapter(std::int64_t session) const;

 private:
  std::unique_ptr<Workload> inner_;
  double base_fraction_;
  std::vector<double> cdf_;  // cdf_[k] = P(adapter ≤ k), cdf_.back() = 1
  // The adapter for two uniform draws in [0, 1): the base model, else by inverse CDF.
  std::int32_t pick(double base, double u) const;

  RandomSource rng_;
  std::uint64_t seed_;
  bool inner_names_ = false;
};

}  // namespace servesim
