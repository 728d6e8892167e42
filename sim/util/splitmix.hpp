#pragma once

#include <cstdint>

namespace servesim {

// splitmix64's finaliser: a bijection of 64-bit words whose outputs for distinct inputs pass as
// independent uniform draws. Every seeded draw and hash of ids in the simulator goes through it,
// so a draw depends on what it is keyed by, never on the order or thread it was made on.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 2^64 / the golden ratio, splitmix64's increment: consecutive keys land far apart.
inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// An independent seed for sub-stream `stream` of `seed`: changing what one stream draws does not
// reshuffle another's.
constexpr std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  return mix64(seed + kGoldenGamma * (stream + 1));
}

// The hash of a pair of ids (a hash table's key, a block's identity).
constexpr std::uint64_t mix64(std::uint64_t a, std::uint64_t b) {
  return mix64(a * kGoldenGamma + b);
}

// A uniform draw in [0, 1) from the top 53 bits of `z`.
constexpr double unit_draw(std::uint64_t z) { return static_cast<double>(z >> 11) * 0x1.0p-53; }

}  // namespace servesim
