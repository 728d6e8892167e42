#include "workloads/arrival_process.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/util/splitmix.hpp"
#include "workloads/overloaded.hpp"

namespace servesim {

ArrivalProcess::ArrivalProcess(const ArrivalSpec& spec, std::uint64_t seed, std::string where)
    : spec_(spec), rng_(stream_seed(seed, 1)), where_(std::move(where)) {
  if (const auto* s = std::get_if<StagedArrivals>(&spec_)) begin_stage(*s, 0);
}

void ArrivalProcess::begin_stage(const StagedArrivals& s, std::size_t index) {
  // Skip empty stages; their time still passes.
  while (index < s.stages.size() && s.stages[index].requests == 0) {
    stage_start_ += s.stages[index].duration + s.gap;
    ++index;
  }
  stage_ = index;
  stage_index_ = 0;
  stage_log_rest_ = 0;
}

double DiurnalArrivals::rate_at(SimTime t) const {
  constexpr double kTwoPi = 6.283185307179586;
  const double peak_at = peak_hour / 24.0 * static_cast<double>(day);
  const double phase = (static_cast<double>(t) - peak_at) / static_cast<double>(day);
  return trough_qps + (peak_qps - trough_qps) * 0.5 * (1 + std::cos(kTwoPi * phase));
}

SimTime stages_end(const StagedArrivals& s) {
  SimTime end = 0;
  for (std::size_t i = 0; i < s.stages.size(); ++i)
    end += (i > 0 ? s.gap : 0) + s.stages[i].duration;
  return end;
}

SimTime ArrivalProcess::next_staged(const StagedArrivals& s) {
  const ArrivalStage& stage = s.stages[stage_];
  // Arrival 1 is at the stage start; arrival k + 1 at the k-th smallest of m = n − 1 uniforms on
  // [0, 1): with L_k = log(1 − U_(k)), L_k = L_(k−1) − E_k / (m − k + 1) for exponential E_k
  // (Rényi's representation), so 1 − U_(k) is a product of powers of uniforms kept in logs.
  if (stage_index_ > 0) {
    const auto left = static_cast<double>(stage.requests - stage_index_);
    stage_log_rest_ -= rng_.exponential(1) / left;
  }
  const double fraction = -std::expm1(stage_log_rest_);
  const SimTime t = stage_start_ + std::llround(fraction * static_cast<double>(stage.duration));
  if (++stage_index_ == stage.requests) {
    stage_start_ += stage.duration + s.gap;
    begin_stage(s, stage_ + 1);
  }
  now_ = std::max(now_, t);
  return now_;
}

bool ArrivalProcess::done() const {
  const auto* s = std::get_if<StagedArrivals>(&spec_);
  return s != nullptr && stage_ >= s->stages.size();
}

SimTime ArrivalProcess::next() {
  ++count_;
  // Computed in double first: a tiny rate must end in an error, not a wrapped int64.
  double t = static_cast<double>(now_);
  std::visit(Overloaded{
                 [&](const PoissonArrivals& p) { t += rng_.exponential(1e9 / p.qps); },
                 [&](const GammaArrivals& g) {
                   const double shape = 1.0 / (g.cv * g.cv);
                   t += rng_.gamma(shape, 1e9 / (g.qps * shape));
                 },
                 [&](const StaticArrivals& s) { t = static_cast<double>(count_) * 1e9 / s.qps; },
                 [&](const StagedArrivals& s) {
                   next_staged(s);
                   t = static_cast<double>(now_);
                 },
                 [&](const DiurnalArrivals& d) {
                   // Candidates in integer ns, so the rate is read where the arrival lands.
                   double c = t;
                   do {
                     c = std::round(c + rng_.exponential(1e9 / d.peak_qps));
                   } while (c <= static_cast<double>(kSimHorizon) &&
                            rng_.uniform01() * d.peak_qps > d.rate_at(std::llround(c)));
                   t = c;
                 },
             },
             spec_);
  if (!(t <= static_cast<double>(kSimHorizon))) {
    throw InputError(fmt::format(
        "{}: arrival {} would come {:.3g} s into the run, past the simulated-time horizon of "
        "{:.0e} s (is the rate too low for the number of requests?)",
        where_, count_, t * 1e-9, kSimHorizonS));
  }
  now_ = std::llround(t);
  return now_;
}

std::string_view ArrivalProcess::kind() const {
  static constexpr std::string_view kNames[] = {"poisson", "gamma", "static", "stages", "diurnal"};
  return kNames[spec_.index()];
}

}  // namespace servesim
