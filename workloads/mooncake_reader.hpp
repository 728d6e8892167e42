#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sim/engine/request.hpp"
#include "sim/engine/time.hpp"

namespace servesim {

// The tokens each Mooncake hash id stands for.
inline constexpr std::int32_t kMooncakeHashBlockTokens = 512;

// One validated line of a Mooncake trace.
struct MooncakeRow {
  SimTime arrival = 0;  // ns from the trace's time origin (its timestamps, ms, as written)
  std::int32_t prompt_tokens = 1;
  std::int32_t output_tokens = 1;
  bool zero_output = false;                    // the file said 0 output tokens (raised to 1)
  std::shared_ptr<const PrefixHashes> hashes;  // chain over hash_ids, one per 512-token block
};

// The chain value of hash block j given the chain value of block j − 1 (0 before the first) and
// block j's id: a splitmix64 mix of both, moved into [2^62, 2^63) (see PrefixHashes).
std::int64_t chain_hash(std::int64_t previous, std::int64_t id);

// Streams a Mooncake FAST'25 trace (kvcache-ai/Mooncake): one JSON object per line with
// `timestamp` (ms, ≥ 0, non-decreasing), `input_length` (≥ 1), `output_length` (≥ 0; 0 is raised
// to 1 and flagged) and `hash_ids` (⌈input_length/512⌉ ids ≥ 0, one per 512-token block of the
// prompt; equal leading ids are an equal prefix). Other keys are ignored, as extra CSV columns
// are. A bad line throws InputError "file:LINE: key 'k': expected …"; nothing is skipped. Parsed
// with nlohmann-json, one line (at most 1 MiB) at a time. Holds O(1) memory. Not thread-safe.
class MooncakeReader {
 public:
  explicit MooncakeReader(std::string path);

  // The next row, or false at end of file.
  bool next(MooncakeRow& row);
  const std::string& path() const { return path_; }
  std::int64_t line() const { return line_; }

 private:
  [[noreturn]] void fail(const std::string& message) const;
  // The value of `key`, a whole number in [lo, hi].
  std::int64_t whole(const nlohmann::json& object, const char* key, std::int64_t lo,
                     std::int64_t hi) const;

  std::string path_;
  std::ifstream in_;
  std::string text_;
  std::int64_t line_ = 0;
  SimTime previous_ = 0;
};

}  // namespace servesim
