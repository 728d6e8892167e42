#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/engine/workload.hpp"
#include "workloads/length_sampler.hpp"
#include "workloads/request_shaper.hpp"
#include "workloads/workload_options.hpp"

namespace servesim {

// `workload.client`: how a serving benchmark client drives a server at a fixed concurrency.
struct ClientSpec {
  std::int64_t max_concurrency = 1;
  std::int64_t num_prompts = 10;  // measured requests
  std::int64_t num_warmups = 2;   // copies of the first request sent before them
};

// A benchmark client as vLLM's `vllm bench serve` (and InferenceX's copy of its
// benchmark_serving.py) runs with `--request-rate inf --max-concurrency C`: every request is
// released at once and sent through a semaphore of C slots, so at most C are in flight and the
// next is sent the instant one of them finishes (or is refused). A request's arrival is its send,
// so TTFT counts from there and never includes the wait for a slot. First num_warmups copies of
// the first request go through their own semaphore of C; the measured requests start when every
// warm-up has finished (the client gathers them). Warm-ups carry RequestSpec::warmup, and the
// first request and its copies share their whole prompt as one prefix group (the same text), so
// a prefix cache sees what the server saw. Lengths come from the `lengths:` section (any kind that
// does not bring its own prefixes), shaped by the common options (start_s, max_tokens).
// State: O(1) plus at most C freed slots. Deterministic for its seed. Not thread-safe.
class BenchmarkClientWorkload final : public Workload, public ClosedLoopWorkload {
 public:
  BenchmarkClientWorkload(const ClientSpec& client, LengthSpec lengths,
                          const WorkloadOptions& options, std::uint64_t seed);

  std::string_view name() const override { return "benchmark_client"; }
  std::optional<RequestSpec> next() override;
  std::optional<std::int64_t> expected_requests() const override {
    return client_.num_warmups + client_.num_prompts;
  }
  bool benchmark_client() const override { return true; }
  ClosedLoopWorkload* closed_loop() override { return this; }

  void on_request_done(const RequestSpec& spec, SimTime now, bool rejected) override;
  void give_back(RequestSpec spec) override;
  void on_request_left_out(const RequestSpec& spec) override;

  WorkloadCounts counts() const { return shaper_.counts(); }

 private:
  // The first measured request's lengths, drawn once: the warm-ups repeat it.
  std::pair<std::int32_t, std::int32_t> first_lengths();

  ClientSpec client_;
  LengthSampler lengths_;
  RequestShaper shaper_;
  std::optional<std::pair<std::int32_t, std::int32_t>> first_;
  // Instants (from the start) at which a slot came free and no request has taken it yet, in
  // order; a slot freed with nothing left to send in its phase is dropped.
  std::deque<SimTime> free_slots_;
  std::optional<RequestSpec> held_;  // given back by the engine, yielded again first
  bool warming_up_ = false;
  std::int64_t warmups_sent_ = 0;
  std::int64_t warmups_done_ = 0;
  std::int64_t sent_ = 0;
};

}  // namespace servesim
