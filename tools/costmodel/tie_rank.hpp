#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace servesim::decide {

// One GPU's predicted time for one case (lower is better) and the model's stated uncertainty of
// it, as a fraction (0.0664 = 6.64%).
struct Prediction {
  std::string gpu;
  double time = 0;
  double uncertainty = 0;
};

// Which of two GPUs a prediction calls faster, or neither: a tie is declared when the two times
// differ by no more than the larger of their uncertainties (|a − b| / min(a, b) ≤ max(u_a, u_b)),
// so a difference the model cannot resolve is never reported as an order.
enum class Call { kFirst, kSecond, kTie };
Call call(const Prediction& a, const Prediction& b);

// The GPUs in predicted order, grouped into tiers of ties: sorted by time, a GPU joins the
// current tier when call() ties it with that tier's fastest, else starts the next tier. Indices
// into `p`.
std::vector<std::vector<std::size_t>> tiers(const std::vector<Prediction>& p);

// Tie-aware scores of predicted calls against measured times (ties are counted apart, never
// rewarded): every pair of GPUs with a measurement is correct (the predicted faster GPU measured
// faster), wrong, or a tie; top-1 is a hit when the first tier is one GPU that measured fastest,
// a tie when the first tier holds several.
struct PairScore {
  int correct = 0;
  int wrong = 0;
  int ties = 0;
  int total() const { return correct + wrong + ties; }
  // correct / total: what a user acting on the calls gets right.
  double tie_aware_accuracy() const;
  // correct / (correct + wrong): how often a call the model does make is right.
  double decided_accuracy() const;
  void merge(const PairScore& o);
};
struct CaseScore {
  PairScore pairs;
  int top1_hits = 0;
  int top1_misses = 0;
  int top1_ties = 0;
};
// `measured[i]` is the measured time of p[i]'s GPU (all positive).
CaseScore score_case(const std::vector<Prediction>& p, const std::vector<double>& measured);

}  // namespace servesim::decide
