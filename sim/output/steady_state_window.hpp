#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/run_observer.hpp"
#include "sim/util/constants.hpp"

namespace servesim {

// What a saturated run does over a benchmark's steady-state window, as ML.ENERGY measures it:
// the window opens when `seats` requests have their first token and closes when all but
// seats + 1 requests have finished; output throughput, ITL percentiles, mean board power,
// energy per output token and mean running batch are taken inside it (steps that straddle an
// edge count by their overlap). Holds 16 bytes per output token and per step until the run ends,
// so it is meant for benchmark-sized runs. Not thread-safe.
class SteadyStateWindow final : public RunObserver {
 public:
  explicit SteadyStateWindow(std::int64_t seats) : seats_(seats) {}

  void on_step(const StepRecord& step, const BatchShape& shape, const StepCost& cost) override;
  void on_tokens(std::span<const TokenEvent> tokens, SimTime now) override;
  void on_request_done(const Request& request, bool rejected) override;

  struct Metrics {
    double window_s = 0;  // 0: the run never filled its seats or ended too soon for a window
    double output_tok_s = kNaN;
    double itl_p50_ms = kNaN;
    double itl_p90_ms = kNaN;
    double power_w = kNaN;  // NaN when the cost model prices no energy
    double j_per_token = kNaN;
    double avg_batch = kNaN;  // running requests, time-weighted over the steps
  };
  Metrics metrics() const;
  // summary.json's `steady_state` object (nulls where a value is NaN).
  nlohmann::json summary() const;

  // Prompt tokens of the finished requests and those served from the prefix cache.
  double prompt_tokens() const { return prompt_tokens_; }
  double cached_tokens() const { return cached_tokens_; }
  std::int64_t preemptions() const { return preemptions_; }

 private:
  struct Step {
    SimTime start;
    SimTime duration;
    double energy_j;
    std::int32_t running;
  };
  std::int64_t seats_;
  // One output chunk: its time, gap (−1 for a first token) and tokens (speculative: > 1).
  struct Chunk {
    SimTime time;
    SimTime gap;
    std::int32_t tokens;
  };
  std::vector<Chunk> tokens_;
  std::vector<SimTime> first_tokens_;
  std::vector<SimTime> finishes_;
  std::vector<Step> steps_;
  double prompt_tokens_ = 0;
  double cached_tokens_ = 0;
  std::int64_t preemptions_ = 0;
};

}  // namespace servesim
