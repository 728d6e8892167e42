#include "tools/costmodel/tie_rank.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace servesim::decide {

Call call(const Prediction& a, const Prediction& b) {
  const double lo = std::min(a.time, b.time);
  const double gap = std::abs(a.time - b.time);
  if (lo <= 0 || gap <= std::max(a.uncertainty, b.uncertainty) * lo) return Call::kTie;
  return a.time < b.time ? Call::kFirst : Call::kSecond;
}

std::vector<std::vector<std::size_t>> tiers(const std::vector<Prediction>& p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a].time < p[b].time; });
  std::vector<std::vector<std::size_t>> out;
  for (const std::size_t i : order) {
    if (!out.empty() && call(p[out.back().front()], p[i]) == Call::kTie) {
      out.back().push_back(i);
    } else {
      out.push_back({i});
    }
  }
  return out;
}

double PairScore::tie_aware_accuracy() const {
  return total() > 0 ? static_cast<double>(correct) / total()
                     : std::numeric_limits<double>::quiet_NaN();
}

double PairScore::decided_accuracy() const {
  return correct + wrong > 0 ? static_cast<double>(correct) / (correct + wrong)
                             : std::numeric_limits<double>::quiet_NaN();
}

void PairScore::merge(const PairScore& o) {
  correct += o.correct;
  wrong += o.wrong;
  ties += o.ties;
}

CaseScore score_case(const std::vector<Prediction>& p, const std::vector<double>& measured) {
  CaseScore s;
  for (std::size_t a = 0; a < p.size(); ++a) {
    for (std::size_t b = a + 1; b < p.size(); ++b) {
      const Call c = call(p[a], p[b]);
      if (c == Call::kTie) {
        ++s.pairs.ties;
      } else if ((c == Call::kFirst) == (measured[a] < measured[b])) {
        ++s.pairs.correct;
      } else {
        ++s.pairs.wrong;
      }
    }
  }
  const auto t = tiers(p);
  if (t.empty()) return s;
  if (t.front().size() > 1) {
    ++s.top1_ties;
  } else {
    const std::size_t best = static_cast<std::size_t>(
        std::min_element(measured.begin(), measured.end()) - measured.begin());
    (t.front().front() == best ? s.top1_hits : s.top1_misses) += 1;
  }
  return s;
}

}  // namespace servesim::decide
