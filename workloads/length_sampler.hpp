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
// The `random` dataset of vLLM's benchmark client (and InferenceX's copy of it): prompt and output
// drawn independently, each uniform over the integers [⌊L · range_ratio⌋, L] for its L (at least
// 1), so range_ratio 1 gives exactly L.
struct RandomLengths {
  std::int32_t input_len = 1;
  std::int32_t output_len = 1;
  double range_ratio = 1;
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
// A histogram of lengths: bin i holds counts[i] of the lengths in [edges[i], edges[i+1]); a draw
// picks a bin in proportion to its count and a whole number uniformly inside it.
struct LengthHistogram {
  std::vector<double> edges;   // ascending, ≥ 1 at the first; one more than counts
  std::vector<double> counts;  // ≥ 0, not all 0
  double mean() const;         // of the lengths a draw yields
};
// Multi-turn chat as benchmarks build it from chat logs (every turn of a conversation is one
// request whose prompt is the whole history so far: the earlier user messages and the logged
// replies, then this turn's user message), with the served model's own output lengths:
// - turns per conversation: geometric with mean turns_mean (≥ 1);
// - message lengths: lognormal with shape `sigma`, user messages of mean U and logged replies of
//   mean reply_ratio · U, U chosen so the messages' own tokens average prompt_tokens_mean over
//   requests (before clipping): turn k holds k user messages and k − 1 replies, and the turns
//   of a geometric conversation weigh Σ_k k·P(T ≥ k) = turns_mean², so
//   prompt_tokens_mean = U · (turns_mean + reply_ratio · (turns_mean − 1));
// - each message adds template_tokens (the chat template's role markers) on top;
// - prompts longer than max_prompt_tokens are cut to it;
// - output lengths drawn from `output` (independent of the prompt);
// - with unique_requests = n > 0, the (n+1)-th request starts the same sequence again (a request
//   file sent repeatedly: the repeats find their prompts in the prefix cache while they last).
// A conversation's turns come one after another; its id is the request's prefix group and the
// whole prompt its prefix, so a turn finds the earlier turns' prompts in the prefix cache.
struct ConversationLengths {
  double turns_mean = 1;
  double prompt_tokens_mean = 1;
  double reply_ratio = 1;
  double sigma = 1;
  std::int32_t template_tokens = 0;
  std::int32_t max_prompt_tokens = 1;
  std::int64_t unique_requests = 0;  // 0: never repeat
  LengthHistogram output;
  // The user-message mean U that gives prompt_tokens_mean.
  double user_tokens_mean() const;
};
using LengthSpec = std::variant<TraceLengths, ZipfLengths, UniformLengths, FixedLengths,
                                ChatLengths, ConversationLengths, RandomLengths>;

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
  // Chat lengths: the user (group × users_per_group + user) of the last next(); conversation
  // lengths: the conversation; else -1.
  std::int64_t last_user() const { return last_user_; }
  const LengthSpec& spec() const { return spec_; }

 private:
  std::int32_t zipf_total(const ZipfLengths& z);
  std::pair<std::int32_t, std::int32_t> conversation_turn(const ConversationLengths& c);
  std::int32_t histogram_draw(const LengthHistogram& h);
  double lognormal(double mean, double sigma);

  LengthSpec spec_;
  RandomSource rng_;
  std::int64_t last_user_ = -1;
  // Vidur's Zipf constants, computed once.
  double zipf_zetan_ = 0;
  double zipf_eta_ = 0;
  double zipf_alpha_ = 0;
  // Conversation state: turns left in the current one, its history (tokens), the message mean.
  std::uint64_t seed_ = 0;
  std::int64_t drawn_ = 0;
  std::int64_t turns_left_ = 0;
  double history_ = 0;
  double user_mean_ = 0;
  std::vector<double> cumulative_;  // histogram counts, summed
};

}  // namespace servesim
