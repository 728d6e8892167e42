#pragma once

#include <functional>
#include <string>

namespace servesim::sweep {

// The highest arrival rate at which a point still meets its SLOs (Vidur-Search's question), by
// bracketing and bisection. From `start` the rate doubles while it meets (halves while it does
// not) until the answer changes, then the bracket [meets, fails] is split near its middle (at the
// number with the fewest significant digits in its middle half) until its width is at most
// `rel_tol` of its lower end. Rates have at most 6 significant digits, so every rate tried is
// exactly what `simulate --set KEY=rate` reads. Assumes meeting the SLO gets no easier as the rate
// rises; `meets` is called in a fixed order, so the search is deterministic.
struct CapacityResult {
  double max_rate = 0;      // highest rate tried that meets (NaN when none did)
  double failing_rate = 0;  // lowest rate tried above it that does not (NaN when none failed)
  int evaluations = 0;      // rates tried
  // "bracketed" | "meets at every rate tried" (max_rate is then a lower bound) | "meets at no
  // rate tried" (failing_rate is then an upper bound)
  std::string outcome;
};
CapacityResult find_max_rate(double start, double rel_tol,
                             const std::function<bool(double rate)>& meets, int max_doublings = 20);

// `x` to 6 significant digits.
double round_rate(double x);

}  // namespace servesim::sweep
