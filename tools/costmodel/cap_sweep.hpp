#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace servesim {

// A measured power-cap sweep of one GPU (data/measured/cap_sweeps.yaml): the share of one bf16
// GEMM's (K × N) throughput lost at the lower of two board caps against the higher, in percent as
// `costmodel power` states its penalty, at several token counts M, each as the range
// [low_pct, high_pct] over repeated runs. Points are sorted by tokens.
struct CapSweep {
  struct Point {
    int tokens = 0;
    double low_pct = 0;
    double high_pct = 0;
  };
  std::string gpu;
  int gemm_k = 0;
  int gemm_n = 0;
  double low_cap_w = 0;
  double high_cap_w = 0;
  std::vector<Point> points;
};

// Loads and validates the file (keys, caps low < high, points ascending in tokens, low ≤ high,
// penalties in (-100, 100) %); throws InputError naming file:line:col and the key.
std::map<std::string, CapSweep> load_cap_sweeps(const std::string& path);
// Where data/measured/cap_sweeps.yaml of this checkout lies.
std::string default_cap_sweeps_path();

// The value of `points` at `tokens`, at level u ∈ [0.1, 0.9] of each point's range (0.1: its low
// end, 0.9: its high end), linear in log2(tokens) between points and flat beyond the ends. With a
// sweep's points: the measured penalty (%).
double interpolate_points(const std::vector<CapSweep::Point>& points, int tokens, double u);

}  // namespace servesim
