#pragma once

namespace servesim {

// Conversions between the units inputs come in (datasheets in TFLOP/s, GB/s, MHz and pJ;
// profiles in ms) and the units the physics computes in (FLOP and bytes per ns or s, W, J).
// A formula names the conversion it makes; a bare power of ten would hide which unit it means.
inline constexpr double kFlopPerNsPerTflops = 1e3;  // 1 TFLOP/s is 1e3 FLOP per ns
inline constexpr double kFlopPerSPerTflops = 1e12;
inline constexpr double kBytesPerSPerGbPerS = 1e9;  // decimal GB
inline constexpr double kGhzPerMhz = 1e-3;
inline constexpr double kMhzPerGhz = 1e3;
inline constexpr double kJoulesPerPicojoule = 1e-12;
inline constexpr double kJoulesPerWattNs = 1e-9;  // one watt drawn for one nanosecond
inline constexpr double kNsPerMsF = 1e6;          // kNsPerMs (sim/engine/time.hpp) as a double

}  // namespace servesim
