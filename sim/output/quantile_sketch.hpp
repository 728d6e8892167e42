#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

// Mergeable quantile sketch for non-negative values with bounded relative error (DDSketch-style
// logarithmic buckets). While at most `exact_limit` values were added it keeps them and answers
// exactly; past that it answers within `relative_accuracy` (default 0.5%) of the true quantile
// value, in memory logarithmic in the value range. Zeros are counted apart. Not thread-safe, not
// even for concurrent const calls (quantile() sorts the exact values lazily).
class QuantileSketch {
 public:
  // relative_accuracy in (0, 1), else std::invalid_argument.
  explicit QuantileSketch(double relative_accuracy = 0.005, std::size_t exact_limit = 65536);

  void add(double value);  // value ≥ 0 (negative values are clamped to 0)
  // add(value), n times: the same state, sum included (summed n times in order, not n · value).
  void add(double value, std::int64_t n);
  // Adds other's values. Stays exact when both are and the total fits exact_limit; else both
  // go through buckets. Throws std::invalid_argument when the relative accuracies differ.
  void merge(const QuantileSketch& other);

  std::int64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  double sum() const { return sum_; }
  bool exact() const { return !sketching_; }
  // q in [0, 1]; 0 for an empty sketch. Nearest-rank definition: the value of rank ceil(q·n)
  // (1-based), q = 0 gives min(). Exact while exact(); else within relative_accuracy, and the
  // ranks 1 and n answer min() and max() exactly.
  double quantile(double q) const;
  // Buckets held once sketching (a dense range from the smallest to the largest positive value's
  // bucket; 0 while exact): about ln(max/min) / ln(gamma), whatever the count.
  std::size_t bucket_count() const { return buckets_.size(); }

 private:
  void spill();  // exact values -> buckets
  int bucket_of(double value) const;
  void add_to_bucket(int index, std::int64_t n);
  double bucket_value(int index) const;

  double gamma_;
  double log_gamma_;
  std::size_t exact_limit_;
  bool sketching_ = false;
  mutable std::vector<double> exact_;  // sorted lazily
  mutable bool sorted_ = true;
  // Dense counts of buckets [bucket_offset_, bucket_offset_ + buckets_.size()); bucket i holds
  // values in (gamma^(i-1), gamma^i]. Grows at either end as needed.
  std::vector<std::int64_t> buckets_;
  int bucket_offset_ = 0;
  double last_value_ = -1;  // the last bucketed value and its absolute bucket index
  int last_index_ = 0;
  std::int64_t zeros_ = 0;
  std::int64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace servesim
