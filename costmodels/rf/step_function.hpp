#pragma once

#include <vector>

#include "costmodels/rf/forest.hpp"

namespace servesim {

// A forest over one integer feature (token count, message bytes), written out exactly: the
// forest is constant between consecutive split thresholds, so it is the value at the start of
// each integer interval. value(x) = values[k] for starts[k] ≤ x < starts[k+1].
// Beyond `domain_max` (the largest x the forest was trained on) a forest would stay flat; the
// function instead grows linearly through the origin, value(domain_max) · x / domain_max, since
// time is proportional to work at large token counts. Below starts[0] it is values[0].
// Invariants: starts ascending and distinct, starts.size() == values.size(); empty = no data.
struct StepFunction {
  std::vector<double> starts;
  std::vector<double> values;
  double domain_max = 0;

  bool empty() const { return starts.empty(); }
  double operator()(double x) const;

  // Evaluates `forest` (feature 0) once per interval between its split thresholds, over the
  // integers [domain_min, domain_max].
  static StepFunction tabulate(const Forest& forest, double domain_min, double domain_max);
};

}  // namespace servesim
