#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/engine/time.hpp"
#include "workloads/random_source.hpp"

namespace servesim {

// Exponential gaps with mean 1/qps.
struct PoissonArrivals {
  double qps = 1;
};
// Gamma gaps with mean 1/qps and coefficient of variation cv: shape 1/cv², scale 1/(qps·shape).
// cv lies in [kMinGammaCv, kMaxGammaCv].
inline constexpr double kMinGammaCv = 0.01;
inline constexpr double kMaxGammaCv = 100;
struct GammaArrivals {
  double qps = 1;
  double cv = 1;
};
// Evenly spaced gaps of exactly 1/qps.
struct StaticArrivals {
  double qps = 1;
};
// One stage of a staged load: `requests` arrivals spread over `duration` ns.
struct ArrivalStage {
  double rate = 1;            // requests per second
  SimTime duration = 0;       // ns
  std::int64_t requests = 0;  // exactly rate × duration
};
// inference-perf's `load.type: constant` stages: each stage holds exactly rate × duration
// requests whose gaps are exponential draws normalized to fill the stage, so the first arrival
// is at the stage start and the last one before its end (Poisson-like with an exact count).
// Stage k+1 starts `gap` ns after stage k ends. The process is finite: done() after the last.
struct StagedArrivals {
  std::vector<ArrivalStage> stages;
  SimTime gap = 0;
};
// When the last stage ends: the durations and the gaps between stages, summed.
SimTime stages_end(const StagedArrivals& s);
// A day-shaped Poisson process: rate(t) = trough + (peak − trough)·(1 + cos(2π(t − t_peak)/day))/2,
// a cosine from trough_qps at t_peak ± day/2 to peak_qps at t_peak = peak_hour/24 · day. Time 0
// is midnight. `day` is the simulated length of one day: 86,400 s is a real day, a shorter one
// compresses the profile in time (the rates stay, so a compressed day holds fewer requests).
// Drawn by thinning (Lewis and Shedler 1979): candidates at peak_qps, each kept with
// probability rate(t)/peak_qps.
struct DiurnalArrivals {
  double peak_qps = 1;
  double trough_qps = 0;  // in [0, peak_qps]
  double peak_hour = 14;  // in [0, 24)
  SimTime day = 86'400'000'000'000;
  double rate_at(SimTime t) const;
};
using ArrivalSpec =
    std::variant<PoissonArrivals, GammaArrivals, StaticArrivals, StagedArrivals, DiurnalArrivals>;

// A synthetic arrival process: the k-th call returns the sum of k gaps (so the first arrival
// comes one gap after the start), in integer ns. Random gaps are rounded to the nearest ns and
// accumulated in integers, so times never drift; static arrivals are round(k·1e9/qps) exactly.
// Deterministic for a seed on any standard library. O(1) state and O(1) work per arrival, staged
// arrivals included: the normalized exponential gaps of a stage of n requests place its arrivals
// 2…n at the order statistics of n − 1 uniforms, which are drawn one after another (each from
// the last and one exponential draw), so a stage of 10^12 requests costs only what is yielded.
// Not thread-safe.
class ArrivalProcess {
 public:
  // `where` starts the message of an arrival past the horizon (the config position).
  ArrivalProcess(const ArrivalSpec& spec, std::uint64_t seed,
                 std::string where = "workload.arrival");

  // Nanoseconds after the start of the next arrival; non-decreasing. Must not be called once
  // done().
  SimTime next();
  // True when a finite process (staged arrivals) has yielded all of its arrivals.
  bool done() const;
  std::string_view kind() const;

 private:
  SimTime next_staged(const StagedArrivals& s);
  void begin_stage(const StagedArrivals& s, std::size_t index);

  ArrivalSpec spec_;
  RandomSource rng_;
  std::string where_;
  SimTime now_ = 0;
  std::int64_t count_ = 0;
  // Staged arrivals: the current stage, its start, the arrivals it has yielded, and
  // log(1 − U) of the last uniform order statistic drawn.
  std::size_t stage_ = 0;
  SimTime stage_start_ = 0;
  std::int64_t stage_index_ = 0;
  double stage_log_rest_ = 0;
};

}  // namespace servesim
