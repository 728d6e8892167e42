#pragma once

#include <cmath>
#include <cstdint>

namespace servesim {

// Simulated time in integer nanoseconds. Floating time never enters the event queue: conversions
// happen only where config is read or results are written.
using SimTime = std::int64_t;

inline constexpr SimTime kNsPerUs = 1'000;
inline constexpr SimTime kNsPerMs = 1'000'000;
inline constexpr SimTime kNsPerS = 1'000'000'000;

// The latest simulated time a run may reach: 1e9 s (31.7 years), far inside int64 ns (2.9e11 s)
// so that sums of times cannot overflow. Inputs that would pass it are errors.
inline constexpr double kSimHorizonS = 1e9;
inline constexpr SimTime kSimHorizon = static_cast<SimTime>(kSimHorizonS) * kNsPerS;

inline SimTime seconds_to_sim(double s) { return static_cast<SimTime>(std::llround(s * 1e9)); }
inline SimTime ms_to_sim(double ms) { return static_cast<SimTime>(std::llround(ms * 1e6)); }
inline double sim_to_s(SimTime t) { return static_cast<double>(t) * 1e-9; }
inline double sim_to_ms(SimTime t) { return static_cast<double>(t) * 1e-6; }

}  // namespace servesim
