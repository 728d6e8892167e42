#include "sim/output/quantile_sketch.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace servesim {

namespace {

// Non-negative, finite: NaN and negatives count as 0, +inf as the largest double.
double sanitize(double value) {
  if (!(value > 0)) return 0;
  return std::min(value, std::numeric_limits<double>::max());
}

// 1-based nearest rank ceil(q·n), in [1, n]. A product a few ulps above an integer (0.29 · 100 =
// 29.000000000000004) counts as that integer.
std::int64_t nearest_rank(double q, std::int64_t n) {
  const double r = std::clamp(q, 0.0, 1.0) * static_cast<double>(n);
  auto rank = static_cast<std::int64_t>(std::ceil(r));
  if (rank > 1 && static_cast<double>(rank - 1) >= r * (1 - 1e-12)) --rank;
  return std::clamp<std::int64_t>(rank, 1, n);
}

// `sum` plus `value` n times, rounded after each addition as a loop rounds it. While every partial
// sum stays inside the binade [2^(e-1), 2^e) of `sum`, each addition rounds to that binade's grid
// of ulp = 2^(e-53) (to nearest, as the default rounding mode does): it adds `value` rounded to the
// grid (the same multiple d every time, unless `value` falls exactly halfway, where the rounding
// follows the partial sum's parity), and every partial sum is an exact multiple of ulp. The n
// additions then give sum + n·d exactly, which is computed at once; elsewhere (a tie, a partial sum
// that could leave the binade) the loop runs.
double add_repeated(double sum, double value, std::int64_t n) {
  // The biased exponent b of a normal sum: sum in [2^(b-1023), 2^(b-1022)), ulp 2^(b-1075). Sums
  // whose ulp or top would not be normal doubles take the loop.
  const auto b = static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(sum) >> 52);
  if (n > 2 && value > 0 && sum > 0 && b > 53 && b < 2046) {
    const double ulp = std::bit_cast<double>(static_cast<std::uint64_t>(b - 52) << 52);
    const double top = std::bit_cast<double>(static_cast<std::uint64_t>(b + 1) << 52);
    if (value < top) {
      const double q = value / ulp;  // a power-of-two scaling; below 2^53
      const auto k = static_cast<double>(static_cast<std::int64_t>(q));  // floor: q ≥ 0
      const double frac = q - k;  // exact: the fraction of a double is one
      if (frac != 0.5) {
        const double d = (frac < 0.5 ? k : k + 1) * ulp;
        // The largest partial sum: at most top − 2 ulp, so each exact sum (partial + value, at
        // most d + ulp/2 above it) stays below top. A rounded product or sum can only land at or
        // above the true one's side of top, so the test never passes wrongly.
        const double end = sum + static_cast<double>(n) * d;
        if (end < top - ulp) return end;
      }
    }
  }
  for (std::int64_t i = 0; i < n; ++i) sum += value;
  return sum;
}

}  // namespace

QuantileSketch::QuantileSketch(double relative_accuracy, std::size_t exact_limit)
    : exact_limit_(exact_limit) {
  if (!(relative_accuracy > 0 && relative_accuracy < 1)) {
    throw std::invalid_argument("QuantileSketch: relative_accuracy must be in (0, 1)");
  }
  gamma_ = (1 + relative_accuracy) / (1 - relative_accuracy);
  log_gamma_ = std::log(gamma_);
  sketching_ = exact_limit_ == 0;
}

int QuantileSketch::bucket_of(double value) const {
  return static_cast<int>(std::ceil(std::log(value) / log_gamma_));
}

double QuantileSketch::bucket_value(int index) const {
  return 2 * std::pow(gamma_, index) / (gamma_ + 1);
}

void QuantileSketch::add_to_bucket(int index, std::int64_t n) {
  if (buckets_.empty()) {
    buckets_.assign(1, 0);
    bucket_offset_ = index;
  } else if (index < bucket_offset_) {
    buckets_.insert(buckets_.begin(), static_cast<std::size_t>(bucket_offset_ - index), 0);
    bucket_offset_ = index;
  } else if (index >= bucket_offset_ + static_cast<int>(buckets_.size())) {
    buckets_.resize(static_cast<std::size_t>(index - bucket_offset_) + 1, 0);
  }
  buckets_[static_cast<std::size_t>(index - bucket_offset_)] += n;
}

void QuantileSketch::add(double value) { add(value, 1); }

void QuantileSketch::add(double value, std::int64_t n) {
  if (n <= 0) return;
  value = sanitize(value);
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += n;
  sum_ = add_repeated(sum_, value, n);  // value by value: n · value rounds apart
  std::int64_t left = n;
  while (!sketching_ && left > 0) {
    if (exact_.size() == exact_limit_) {
      spill();  // before a push, so the vector never doubles past the limit
      break;
    }
    exact_.push_back(value);
    sorted_ = false;
    --left;
  }
  if (left == 0) return;
  if (value == 0) {
    zeros_ += left;
  } else if (value == last_value_) {
    // Runs of equal values are the common case (every request decoding in a step sees the same
    // token gap): skip the logarithm. The index is absolute, so front growth keeps it valid.
    buckets_[static_cast<std::size_t>(last_index_ - bucket_offset_)] += left;
  } else {
    last_index_ = bucket_of(value);
    last_value_ = value;
    add_to_bucket(last_index_, left);
  }
}

void QuantileSketch::spill() {
  sketching_ = true;
  for (double v : exact_) {
    if (v == 0) {
      ++zeros_;
    } else {
      add_to_bucket(bucket_of(v), 1);
    }
  }
  std::vector<double>().swap(exact_);
  sorted_ = true;
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.gamma_ != gamma_) {
    throw std::invalid_argument("QuantileSketch::merge: relative accuracies differ");
  }
  if (other.count_ == 0) return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;

  if (!sketching_ && !other.sketching_ && exact_.size() + other.exact_.size() <= exact_limit_) {
    exact_.insert(exact_.end(), other.exact_.begin(), other.exact_.end());
    sorted_ = false;
    return;
  }
  if (!sketching_) spill();
  if (!other.sketching_) {
    for (double v : other.exact_) {
      if (v == 0) {
        ++zeros_;
      } else {
        add_to_bucket(bucket_of(v), 1);
      }
    }
    return;
  }
  zeros_ += other.zeros_;
  for (std::size_t i = 0; i < other.buckets_.size(); ++i) {
    if (other.buckets_[i] != 0) {
      add_to_bucket(other.bucket_offset_ + static_cast<int>(i), other.buckets_[i]);
    }
  }
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  const std::int64_t rank = nearest_rank(q, count_);
  if (rank == 1) return min_;
  if (rank == count_) return max_;
  if (!sketching_) {
    if (!sorted_) {
      std::sort(exact_.begin(), exact_.end());
      sorted_ = true;
    }
    return exact_[static_cast<std::size_t>(rank - 1)];
  }
  std::int64_t seen = zeros_;
  if (rank <= seen) return 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (rank <= seen) {
      const double v = bucket_value(bucket_offset_ + static_cast<int>(i));
      return std::clamp(v, min_, max_);
    }
  }
  return max_;  // unreachable: the buckets and zeros hold count_ values
}

}  // namespace servesim
