#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "workloads/random_source.hpp"
#include "workloads/trace_reader.hpp"

namespace servesim {

// (prompt, output) pairs drawn with replacement from a length file, loaded whole (length files
// are small: two int32 per row). Rows flagged has_error are left out; zeros are raised to 1.
struct TraceLengths {
  std::string file;
  std::vector<std::int32_t> prompt;
  std::vector<std::int32_t> output;
  TraceCounts counts;  // of the pool's rows (has_error rows are left out of the pool)
};
// Total length from Vidur's Zipf generator over [min_tokens, max_tokens], split by
// prefill_decode_ratio (P:D): output = ⌊total/(1+r)⌋, prompt = ⌊total − total/(1+r)⌋.
struct ZipfLengths {
  std::int32_t min_tokens = 1;
  std::int32_t max_tokens = 1;
  double theta = 0.6;
  double prefill_decode_ratio = 1;
};
// Total uniform over the integers [min_tokens, max_tokens], split as Vidur's uniform generator:
// output = ⌈total/(1+r)⌉, prompt = total − output.
struct UniformLengths {
  std::int32_t min_tokens = 1;
  std::int32_t max_tokens = 1;
  double prefill_decode_ratio = 1;
};
struct FixedLengths {
  std::int32_t prompt_tokens = 1;
  std::int32_t output_tokens = 1;
};
// inference-perf's shared_prefix data: num_groups system prompts, each shared by users_per_group
// users with their own question; every request comes from one user drawn uniformly, with the
// prompt system + question tokens and exactly output_tokens output (ignore_eos). A user's prompt
// is the same text every time, so the whole prompt is that user's shared prefix
// (LengthSampler::last_user() names it).
struct ChatLengths {
  std::int64_t num_groups = 1;
  std::int64_t users_per_group = 1;
  std::int32_t system_prompt_tokens = 0;
  std::int32_t question_tokens = 1;
  std::int32_t output_tokens = 1;
};
using LengthSpec =
    std::variant<TraceLengths, ZipfLengths, UniformLengths, FixedLengths, ChatLengths>;

// Loads a length pool from a file (see TraceReader::lengths_only). Throws InputError for a bad
// row or a file without usable rows.
TraceLengths load_trace_lengths(const std::string& path);

// Vidur's Zipf normaliser: the sum of i^−θ for i = 1 … count − 1 (θ in [0, 1)), in time that does
// not grow with count.
double vidur_zeta(std::int64_t count, double theta);

// Draws request lengths; both are ≥ 1. Deterministic for a seed on any standard library.
// State is O(1) apart from a trace pool, which is fixed in size. Not thread-safe.
class LengthSampler {
 public:
  LengthSampler(LengthSpec spec, std::uint64_t seed);

  // (prompt tokens, output tokens).
  std::pair<std::int32_t, std::int32_t> next();
  std::string_view kind() const;
  // Chat lengths: the user (group × users_per_group + user) of the last next(); else -1.
  std::int64_t last_user() const { return last_user_; }
  const LengthSpec& spec() const { return spec_; }

 private:
  std::int32_t zipf_total(const ZipfLengths& z);

  LengthSpec spec_;
  RandomSource rng_;
  std::int64_t last_user_ = -1;
  // Vidur's Zipf constants, computed once.
  double zipf_zetan_ = 0;
  double zipf_eta_ = 0;
  double zipf_alpha_ = 0;
};

}  // namespace servesim
