#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace servesim {

// Mergeable quantile sketch for non-negative values with bounded relative error (DDSketch-style
// logarithmic buckets). While at most `exact_limit` values were added it keeps them and answers
// exactly; past that it answers within `relative_accuracy` (default 0.5%) of the true quantile
// value, in memory logarithmic in the value range. Not thread-safe.
class QuantileSketch {
 public:
  explicit QuantileSketch(double relative_accuracy = 0.005, std::size_t exact_limit = 65536);

  void add(double value);  // value ≥ 0 (negative values are clamped to 0)
  void merge(const QuantileSketch& other);

  std::int64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  double sum() const { return sum_; }
  bool exact() const { return !sketching_; }
  // q in [0, 1]; 0 for an empty sketch. Exact values use the nearest-rank definition.
  double quantile(double q) const;

 private:
  void spill();  // exact values -> buckets
  int bucket_of(double value) const;

  double gamma_;
  double log_gamma_;
  std::size_t exact_limit_;
  bool sketching_ = false;
  mutable std::vector<double> exact_;  // sorted lazily
  mutable bool sorted_ = true;
  std::map<int, std::int64_t> buckets_;
  std::int64_t zeros_ = 0;
  std::int64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace servesim
