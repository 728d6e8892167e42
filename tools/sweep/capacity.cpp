#include "tools/sweep/capacity.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "sim/util/constants.hpp"

namespace servesim::sweep {

double round_rate(double x) { return std::stod(fmt::format("{:.6g}", x)); }

namespace {
// The number with the fewest significant digits in the middle half of (lo, hi): the bracket still
// shrinks to at most 3/4 per step, and the rates tried read like ones a person would pick.
double split_point(double lo, double hi) {
  const double a = lo + (hi - lo) / 4, b = hi - (hi - lo) / 4;
  for (int digits = 1; digits <= 6; ++digits) {
    const double m = std::stod(fmt::format("{:.{}g}", (lo + hi) / 2, digits));
    if (m >= a && m <= b) return m;
  }
  return round_rate((lo + hi) / 2);
}
}  // namespace

CapacityResult find_max_rate(double start, double rel_tol,
                             const std::function<bool(double rate)>& meets, int max_doublings) {
  CapacityResult r;
  auto test = [&](double rate) {
    ++r.evaluations;
    return meets(rate);
  };
  // Double while the SLO is met, halve while it is not, until the answer changes.
  double from = round_rate(start);
  const bool up = test(from);
  double lo = from, hi = from;
  for (int k = 0;; ++k) {
    const double next = round_rate(up ? from * 2 : from / 2);
    if (test(next) != up) {
      lo = up ? from : next;
      hi = up ? next : from;
      break;
    }
    from = next;
    if (k + 1 == max_doublings) {
      r.max_rate = up ? from : kNaN;
      r.failing_rate = up ? kNaN : from;
      r.outcome = up ? "meets at every rate tried" : "meets at no rate tried";
      return r;
    }
  }
  while (hi - lo > rel_tol * lo) {
    const double mid = split_point(lo, hi);
    if (mid <= lo || mid >= hi) break;  // 6 digits cannot split it further
    (test(mid) ? lo : hi) = mid;
  }
  r.max_rate = lo;
  r.failing_rate = hi;
  r.outcome = "bracketed";
  return r;
}

}  // namespace servesim::sweep
