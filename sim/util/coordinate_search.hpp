#pragma once

#include <functional>
#include <vector>

namespace servesim {

// One value a coordinate search moves: its bounds and its first step.
struct SearchAxis {
  double* value;
  double lo;
  double hi;
  double step;  // halved after every round
};

// Greedy coordinate search, the calibration searches' common core: for `rounds` rounds, each axis
// in turn moves by its step down and then up for as long as `objective()` (read at the current
// values) drops by more than 1e-9, staying within [lo, hi]; a move the bounds stop or that does
// not improve is undone. `best` is the objective at the values on entry (the caller starts them
// within bounds). Returns the best objective; the values are left where it was reached. The point
// an improving move left is never evaluated again (the first step back up after moves down).
double coordinate_search(const std::vector<SearchAxis>& axes, int rounds, double best,
                         const std::function<double()>& objective);

}  // namespace servesim
