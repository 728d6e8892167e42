#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace servesim {

// 64-bit FNV-1a, continuing from `h` (start from kFnvOffset). Not cryptographic: it tells file
// contents apart (cache keys, the input files a summary names), it does not authenticate them.
inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnvOffset);

// The FNV-1a 64 of a file's bytes as 16 hex digits; throws InputError when it cannot be read.
std::string file_fnv1a64(const std::string& path);

}  // namespace servesim
