#include "sim/util/coordinate_search.hpp"

#include <algorithm>
#include <cmath>

#include "sim/util/constants.hpp"

namespace servesim {

double coordinate_search(const std::vector<SearchAxis>& axes, int rounds, double best,
                         const std::function<double()>& objective) {
  for (int round = 0; round < rounds; ++round) {
    const double scale = std::ldexp(1.0, -round);
    for (const SearchAxis& a : axes) {
      // The value before the last improving move: known worse, so never evaluated again (after
      // moves down, the first step up lands on it unless a bound shortened the last move).
      double worse = kNaN;
      for (const double dir : {-1.0, 1.0}) {
        for (;;) {
          const double keep = *a.value;
          *a.value = std::clamp(keep + dir * a.step * scale, a.lo, a.hi);
          if (*a.value == keep || *a.value == worse) {
            *a.value = keep;
            break;
          }
          const double v = objective();
          if (!(v < best - 1e-9)) {
            *a.value = keep;
            break;
          }
          best = v;
          worse = keep;
        }
      }
    }
  }
  return best;
}

}  // namespace servesim
