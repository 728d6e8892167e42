#include "workloads/length_sampler.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/input_error.hpp"
#include "workloads/overloaded.hpp"

namespace servesim {
namespace {

// Vidur's _zeta(count, theta): Σ_{i=1}^{count-1} i^-theta (its upper bound is exclusive).
double vidur_zeta(std::int64_t count, double theta) {
  double sum = 0;
  for (std::int64_t i = 1; i < count; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
  return sum;
}

std::int32_t at_least_one(double tokens) {
  return std::max<std::int32_t>(1, static_cast<std::int32_t>(tokens));
}

}  // namespace

TraceLengths load_trace_lengths(const std::string& path) {
  TraceLengths pool;
  pool.file = path;
  TraceReader reader = TraceReader::lengths_only(path);
  TraceRow row;
  while (reader.next(row)) {
    if (row.error) continue;  // a failed measured request has no real lengths
    pool.prompt.push_back(row.prompt_tokens);
    pool.output.push_back(row.output_tokens);
    // The counters describe the pool: rows left out are not "raised" or "replayed".
    ++pool.counts.rows;
    pool.counts.zero_prompt_rows += row.zero_prompt;
    pool.counts.zero_output_rows += row.zero_output;
  }
  if (pool.prompt.empty()) {
    throw InputError(fmt::format("{}: no usable rows (expected at least one row with lengths{})",
                                 path, reader.counts().error_rows > 0 ? " and has_error = 0" : ""));
  }
  return pool;
}

LengthSampler::LengthSampler(LengthSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), rng_(substream_seed(seed, 2)) {
  if (const auto* z = std::get_if<ZipfLengths>(&spec_)) {
    const std::int64_t items = std::int64_t{z->max_tokens} - z->min_tokens + 1;
    constexpr double kEps = 1e-8;  // as Vidur
    const double zeta2 = vidur_zeta(2, z->theta);
    zipf_alpha_ = 1.0 / (1.0 - z->theta);
    zipf_zetan_ = vidur_zeta(items, z->theta);
    zipf_eta_ = (1.0 - std::pow(2.0 / static_cast<double>(items), 1.0 - z->theta)) /
                (1.0 - zeta2 / (zipf_zetan_ + kEps));
  }
}

std::int32_t LengthSampler::zipf_total(const ZipfLengths& z) {
  const double u = rng_.uniform01();
  const double uz = u * zipf_zetan_;
  if (uz < 1.0) return z.min_tokens;
  if (uz < 1.0 + std::pow(0.5, z.theta)) return std::min(z.min_tokens + 1, z.max_tokens);
  const double items = static_cast<double>(std::int64_t{z.max_tokens} - z.min_tokens + 1);
  const double offset = items * std::pow(zipf_eta_ * u - zipf_eta_ + 1.0, zipf_alpha_);
  // Vidur can return max + 1 as u → 1; keep the range closed.
  return static_cast<std::int32_t>(
      std::min<double>(z.max_tokens, z.min_tokens + std::floor(offset)));
}

std::pair<std::int32_t, std::int32_t> LengthSampler::next() {
  return std::visit(
      Overloaded{
          [&](const TraceLengths& t) {
            const auto i = static_cast<std::size_t>(
                rng_.uniform_int(0, static_cast<std::int64_t>(t.prompt.size()) - 1));
            return std::pair{t.prompt[i], t.output[i]};
          },
          [&](const ZipfLengths& z) {
            const double total = zipf_total(z);
            const double decode = total / (1.0 + z.prefill_decode_ratio);
            return std::pair{at_least_one(total - decode), at_least_one(decode)};
          },
          [&](const UniformLengths& u) {
            const double total = static_cast<double>(rng_.uniform_int(u.min_tokens, u.max_tokens));
            const double decode = std::ceil(total / (1.0 + u.prefill_decode_ratio));
            return std::pair{at_least_one(total - decode), at_least_one(decode)};
          },
          [&](const FixedLengths& f) {
            return std::pair{f.prompt_tokens, f.output_tokens};
          },
          [&](const ChatLengths& c) {
            last_user_ = rng_.uniform_int(0, c.num_groups * c.users_per_group - 1);
            return std::pair{c.system_prompt_tokens + c.question_tokens, c.output_tokens};
          },
      },
      spec_);
}

std::string_view LengthSampler::kind() const {
  static constexpr std::string_view kNames[] = {"trace", "zipf", "uniform", "fixed",
                                                "shared_prefix_chat"};
  return kNames[spec_.index()];
}

}  // namespace servesim
