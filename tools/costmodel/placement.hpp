#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// Placing independent pieces of work (prefill chunks, requests) on GPUs that each run theirs one
// after another, to finish all of them soonest (the makespan): the problem of `costmodel
// place` (costmodels/README.md). `price[j][g]` is the time of piece j on GPU g (ns).
using PriceTable = std::vector<std::vector<double>>;

struct Placement {
  std::vector<int> gpu_of;  // per piece
  double makespan_ns = 0;   // under the table it was evaluated with
};

// The latest finishing GPU's total under `price`.
double makespan_ns(const std::vector<int>& gpu_of, const PriceTable& price);

// Longest first (by the piece's lowest price; ties by index), each on the GPU where it would
// finish earliest by `price` (ties to the lower GPU index): list scheduling with the scheduler's
// own prices. A power-aware scheduler passes the capped prices, a cap-blind one each GPU's
// uncapped price; either is then judged by makespan_ns under the true prices.
Placement earliest_finish(const PriceTable& price);

// The makespan under `truth` of earliest_finish(`price`), averaged over every rotation of the GPU
// order: a scheduler whose prices tie GPUs (cap-blind, on GPUs of one kind) breaks its ties by an
// order that says nothing of the caps, so no one order stands for it.
double earliest_finish_makespan_over_orders(const PriceTable& price, const PriceTable& truth);

// Every assignment of pieces to GPUs, the one of least makespan under `price` (ties: the first in
// lexicographic order of gpu_of). Refuses (InputError naming `what`) when there are more than
// `max_assignments` assignments (GPUs^pieces).
Placement brute_force(const PriceTable& price, std::int64_t max_assignments,
                      const std::string& what);
inline constexpr std::int64_t kOracleMaxAssignments = std::int64_t{1} << 22;

}  // namespace servesim
