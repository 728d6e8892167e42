#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servesim::sweep {

// One varied key of a sweep: `--vary KEY=SPEC`, its values as the YAML text each point sets.
struct Axis {
  std::string key;
  std::vector<std::string> values;
};

// The values of one `--vary` SPEC (`flag` names the whole flag in errors, "--vary k=…"):
//   V1,V2,…        a list (commas inside [], {} or quotes do not split: `{a: 1, b: 2}` is one)
//   A..B:xF        geometric from A while ≤ B (≥ B when F < 1): A, A·F, A·F², …
//   A..B:+S        arithmetic: A, A+S, A+2S, … (S < 0 counts down)
//   @FILE          one value per line (blank lines and lines starting with # are not values)
// A range whose ends are integers gives integers (rounded to the nearest; two equal values after
// rounding are an error), others 12 significant digits. B is included when the steps reach it.
// Errors (InputError) name the flag and what was expected; a FILE's errors name its line.
std::vector<std::string> expand_values(const std::string& spec, const std::string& flag);

// "KEY=SPEC" → an Axis (KEY as `--set` takes it: dotted, list items by index).
Axis parse_axis(const std::string& arg);

// The points of a sweep: the cartesian product of its axes (the last axis varies fastest), or
// with `zip` their element-wise pairing (all axes the same length). `seed` is no axis: the seeds
// are the replicates every point runs with.
class Grid {
 public:
  // `varies`: the --vary arguments in order. A `seed` axis gives the replicate seeds; else
  // `replicates` seeds base_seed, base_seed + 1, … (independent streams: each run derives its
  // sub-streams from its seed by splitmix64). Both a seed axis and replicates > 1 is an error.
  Grid(const std::vector<std::string>& varies, bool zip, int replicates, std::uint64_t base_seed);

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<std::uint64_t>& seeds() const { return seeds_; }
  bool zipped() const { return zip_; }
  std::size_t size() const { return size_; }  // grid points (not counting seeds)
  // The value of every axis at `point`, in axis order.
  std::vector<std::string> values(std::size_t point) const;
  // "key=value" per axis at `point`: what a `--set` of that point reads.
  std::vector<std::string> assignments(std::size_t point) const;
  // "k1=v1, k2=v2" for messages.
  std::string describe(std::size_t point) const;
  // The point whose axes take these values ("key=value" each; every axis named once), or none.
  std::optional<std::size_t> find(const std::vector<std::string>& assignments) const;

 private:
  std::vector<Axis> axes_;
  std::vector<std::uint64_t> seeds_;
  bool zip_ = false;
  std::size_t size_ = 1;
};

}  // namespace servesim::sweep
