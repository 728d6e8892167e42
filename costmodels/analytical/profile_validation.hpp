#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Error statistics of predictions against measurements: MAPE and mean signed percentage error,
// and the time-weighted sums (of measured time and of |predicted − measured|).
struct ErrorStats {
  double abs_sum = 0;
  double signed_sum = 0;
  int n = 0;
  double measured_sum = 0;
  double abs_err_sum = 0;
  void add(double predicted, double measured);
  void merge(const ErrorStats& o);
  double mape() const { return n ? 100 * abs_sum / n : 0; }
  double mspe() const { return n ? 100 * signed_sum / n : 0; }
  // Time-weighted error: Σ|predicted − measured| / Σ measured, in %.
  double wape() const { return measured_sum > 0 ? 100 * abs_err_sum / measured_sum : 0; }
};

// The shape an op of a Vidur row computes: the token count and the model dimensions that decide
// its work after the TP split (the norms and the residual add do not depend on TP). Equal
// shapes time equal work, whichever file or model they come from.
using VidurOpShape = std::array<long long, 6>;
VidurOpShape vidur_op_shape(const ModelSpec& m, int tp, VidurOp op, int tokens);

// Accuracy of the analytical model on one Vidur mlp.csv, overall and per TP degree.
// "decode-like" rows have num_tokens ≤ 128; "prefill-like" the rest. The MLP block of a row is
// the sum of every op the file times for one layer.
struct ProfileValidation {
  struct Slice {
    int tp = 0;  // 0 = all TP degrees
    std::array<ErrorStats, kNumVidurOps> ops{}, decode_ops{}, prefill_ops{};
    ErrorStats block, decode_block, prefill_block;
    // The file offset (a "file" here is one model × TP degree, one profiling run), an oracle no
    // shape model has: the one scale s of this file's block predictions that minimises their
    // MAPE (Σ|s·p/m − 1| is least at the median of m/p weighted by p/m), and the block errors
    // after it. What it removes is error shared by the whole file (a harness state of the
    // profiling run, such as the between-files drift), not error of shape. Per TP slice; a merged
    // slice keeps each file's own scale (offset_scale 0).
    double offset_scale = 0;
    ErrorStats offset_block;
    // The block with each light op at its measured time and only the four projection GEMMs
    // priced: the block error the GEMMs alone cause (where a profile's light kernels are not
    // the ones the light constants describe, as in a harness of one's own, this is the figure
    // that judges the GEMM model).
    ErrorStats gemm_block;
    void merge(const Slice& o);
    // An op's share of the block's measured time and its |error| in points of block time
    // (Σ|predicted − measured| of the op / Σ measured block), both in %: how much the op's
    // errors can move the block, whatever its own MAPE.
    double time_share(std::size_t op) const;
    double block_error_points(std::size_t op) const;
    // The same summed over the light ops (every op but the four projection GEMMs).
    double light_time_share() const;
    double light_error_points() const;
  };
  std::string model;
  std::vector<Slice> slices;  // [0] = all, then one per TP degree ascending
  // Per row and op (filled only when asked): predicted and measured ns, for residual analysis.
  struct Residual {
    int line = 0;
    int tp = 0;
    int tokens = 0;
    VidurOp op = VidurOp::kEmb;
    double predicted_ns = 0;
    double measured_ns = 0;
    VidurOpShape shape{};
  };
  std::vector<Residual> residuals;
};

// A model spec for a profiled model: dimensions from the profile row; norm type, parallel block
// and layer count from `catalog_model` when given (it may be null).
ModelSpec model_from_profile(const VidurMlpRow& row, const std::string& name,
                             const ModelSpec* catalog_model);

ProfileValidation validate_profile(const std::vector<VidurMlpRow>& rows, const std::string& name,
                                   const GpuSpec& gpu, const ModelSpec* catalog_model,
                                   const AnalyticalParams& params, const AnalyticalTerms& terms,
                                   bool keep_residuals = false);

// How well the profiles reproduce themselves: every time whose op and shape were timed more than
// once across `results` (a repeated row, another TP file of the model for a norm or an add,
// another model of equal dimensions for a GEMM) against the best single value for its shape
// (the one with the least MAPE over the shape's times), and the model's prediction of the same
// times. No model that prices a shape one way can score below the first on these times: it is
// the floor set by the profiles' own scatter. Needs the residuals.
struct ProfileReproducibility {
  struct Op {
    int shapes = 0;    // shapes timed at least twice
    ErrorStats floor;  // each time vs the best single value of its shape
    ErrorStats model;  // the model on the same times
  };
  std::array<Op, kNumVidurOps> ops{};
  // Between files: one shape timed in two files (model × TP), both times at least
  // kBetweenMinNs (the profiles tick in 1 µs: below it a tick is over 5%). Per pair of TP
  // degrees (lower, higher), each pair of times as time in the higher-degree file / time in the
  // lower-degree file − 1; for files of equal TP (other models) the larger over the smaller − 1.
  // Kinds: the projection GEMMs, and the norms and residual adds (the shapes every TP file of a
  // model shares).
  static constexpr double kBetweenMinNs = 20000;
  enum class Kind { kGemm, kNormAdd };
  static constexpr std::array<const char*, 2> kKindNames = {"gemm", "norm_add"};
  struct Between {
    std::map<std::pair<int, int>, std::vector<double>> across_tp;
    std::vector<double> equal_tp;
    bool empty() const { return across_tp.empty() && equal_tp.empty(); }
  };
  std::array<Between, 2> between{};  // by Kind
};
ProfileReproducibility profile_reproducibility(const std::vector<ProfileValidation>& results);

// Every mlp.csv under `dir` (recursively), with its model id "org/name" (the two parent
// folders), sorted by id.
std::vector<std::pair<std::string, std::string>> find_mlp_profiles(const std::string& dir);

// The mlp.csv files of one GPU under `dir` (Vidur's profiling or profiling/compute folder, or the
// GPU's own folder): the first of <dir>/<name> and <dir>/compute/<name>, for each of `gpu_names`
// as given and lowercased, then <dir> itself, that holds <org>/<model>/mlp.csv directly (a
// deeper hit belongs to another GPU). Throws InputError (prefixed `who`) when none does.
struct GpuProfiles {
  std::string dir;
  std::vector<std::pair<std::string, std::string>> files;  // model id, path (sorted by id)
};
GpuProfiles find_gpu_profiles(const std::string& dir, const std::vector<std::string>& gpu_names,
                              const std::string& who);

}  // namespace servesim
