#include "workloads/length_sampler.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/config/input_error.hpp"
#include "sim/util/splitmix.hpp"
#include "workloads/overloaded.hpp"

namespace servesim {
namespace {

std::int32_t at_least_one(double tokens) {
  return std::max<std::int32_t>(1, static_cast<std::int32_t>(tokens));
}

}  // namespace

// Vidur's _zeta(count, theta): Σ_{i=1}^{count-1} i^-theta (its upper bound is exclusive). Summed
// term by term up to 10^5 terms (Vidur's own loop, bit for bit); beyond, the first 10^4 terms are
// summed and the rest comes from the Euler–Maclaurin formula, whose remainder after the f^(5) term
// is below 1e-20 of the sum at i ≥ 10^4, so setup costs the same for any range.
double vidur_zeta(std::int64_t count, double theta) {
  constexpr std::int64_t kSummed = 100'000;
  constexpr std::int64_t kHead = 10'000;
  const std::int64_t last = count - 1;
  double sum = 0;
  const std::int64_t head = last <= kSummed ? last + 1 : kHead;
  for (std::int64_t i = 1; i < head; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
  if (last <= kSummed) return sum;
  // Σ_{i=a}^{b} f(i) = ∫_a^b f + (f(a) + f(b))/2 + Σ_k B_2k/(2k)! (f^(2k−1)(b) − f^(2k−1)(a)).
  const auto a = static_cast<double>(kHead);
  const auto b = static_cast<double>(last);
  const auto f = [theta](double x) { return std::pow(x, -theta); };
  sum += (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta) + (f(a) + f(b)) / 2;
  // f^(2k−1)(x) = −θ(θ+1)…(θ+2k−2) x^(−θ−2k+1); B2/2! = 1/12, B4/4! = −1/720, B6/6! = 1/30240.
  constexpr double kBernoulli[] = {1.0 / 12, -1.0 / 720, 1.0 / 30240};
  double rising = theta;  // θ(θ+1)…(θ+2k−2)
  for (int k = 1; k <= 3; ++k) {
    const double power = -theta - 2 * k + 1;
    sum += kBernoulli[k - 1] * -rising * (std::pow(b, power) - std::pow(a, power));
    rising *= (theta + 2 * k - 1) * (theta + 2 * k);
  }
  return sum;
}

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
    const auto& c = reader.counts();
    if (c.error_rows == 0) {
      throw_input_error(path, 1, 0,
                        "no usable rows (expected at least one row with lengths after the header)");
    }
    throw_input_error(path, static_cast<int>(c.first_error_line), 0,
                      fmt::format("no usable rows: all {} rows have has_error = 1, the first here "
                                  "(expected at least one row with has_error = 0)",
                                  c.error_rows));
  }
  return pool;
}

double LengthHistogram::mean() const {
  double n = 0;
  double sum = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    // A draw is uniform over the whole numbers in [lo, hi): their mean.
    const double lo = std::ceil(edges[i]);
    const double hi = std::max(lo, std::ceil(edges[i + 1]) - 1);
    n += counts[i];
    sum += counts[i] * 0.5 * (lo + hi);
  }
  return sum / n;
}

double ConversationLengths::user_tokens_mean() const {
  return std::max(1.0, prompt_tokens_mean / (turns_mean + reply_ratio * (turns_mean - 1)));
}

LengthSampler::LengthSampler(LengthSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), rng_(stream_seed(seed, 2)), seed_(seed) {
  if (const auto* c = std::get_if<ConversationLengths>(&spec_)) {
    user_mean_ = c->user_tokens_mean();
    double sum = 0;
    for (double n : c->output.counts) cumulative_.push_back(sum += n);
  }
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

double LengthSampler::lognormal(double mean, double sigma) {
  return std::exp(std::log(mean) - 0.5 * sigma * sigma + sigma * rng_.normal());
}

std::int32_t LengthSampler::histogram_draw(const LengthHistogram& h) {
  const double u = rng_.uniform01() * cumulative_.back();
  const auto bin = static_cast<std::size_t>(
      std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin());
  const std::size_t i = std::min(bin, cumulative_.size() - 1);
  const auto lo = static_cast<std::int64_t>(std::ceil(h.edges[i]));
  const auto hi = std::max(lo, static_cast<std::int64_t>(std::ceil(h.edges[i + 1])) - 1);
  return at_least_one(static_cast<double>(rng_.uniform_int(lo, hi)));
}

std::pair<std::int32_t, std::int32_t> LengthSampler::conversation_turn(
    const ConversationLengths& c) {
  if (c.unique_requests > 0 && drawn_ > 0 && drawn_ % c.unique_requests == 0) {
    rng_ = RandomSource(stream_seed(seed_, 2));  // the same request file again
    turns_left_ = 0;
    last_user_ = -1;
  }
  ++drawn_;
  if (turns_left_ == 0) {
    ++last_user_;
    history_ = 0;
    // Geometric on {1, 2, …} with mean turns_mean, by inverse CDF.
    const double q = 1 - 1 / c.turns_mean;
    turns_left_ = q <= 0 ? 1
                         : 1 + static_cast<std::int64_t>(
                                   std::floor(std::log(rng_.uniform_open01()) / std::log(q)));
  }
  --turns_left_;
  const double user = std::round(lognormal(user_mean_, c.sigma)) + c.template_tokens;
  const double prompt = std::min<double>(c.max_prompt_tokens, history_ + user);
  history_ += user + std::round(lognormal(c.reply_ratio * user_mean_, c.sigma)) + c.template_tokens;
  return {at_least_one(prompt), histogram_draw(c.output)};
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
          [&](const ConversationLengths& c) { return conversation_turn(c); },
          [&](const RandomLengths& r) {
            const auto draw = [&](std::int32_t len) {
              const auto lo = std::max<std::int64_t>(
                  1, static_cast<std::int64_t>(std::floor(len * r.range_ratio)));
              return static_cast<std::int32_t>(rng_.uniform_int(lo, len));
            };
            const std::int32_t prompt = draw(r.input_len);
            return std::pair{prompt, draw(r.output_len)};
          },
      },
      spec_);
}

std::string_view LengthSampler::kind() const {
  static constexpr std::string_view kNames[] = {
      "trace", "zipf", "uniform", "fixed", "shared_prefix_chat", "conversation", "random"};
  return kNames[spec_.index()];
}

}  // namespace servesim
