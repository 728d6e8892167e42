#pragma once

#include <array>
#include <string>
#include <vector>

#include "costmodels/profile/vidur_profile.hpp"
#include "costmodels/rf/forest.hpp"
#include "costmodels/rf/step_function.hpp"

namespace servesim {

// How the forests are trained. Depth is chosen per forest by k-fold cross-validated MAPE over
// `depth_grid` (as Vidur's grid search does, on a smaller grid so that one model trains in
// seconds); the CV fits use `cv_trees` trees, the final fit `forest.trees`.
struct RfTrainOptions {
  ForestParams forest;
  std::vector<int> depth_grid = {6, 8, 12};
  int cv_folds = 3;
  int cv_trees = 50;
  int threads = 2;  // forests trained concurrently (each XGBoost call single-threaded)

  // Everything that changes the trained numbers (part of the cache key); `threads` is not.
  std::string describe() const;
};

// One feature → time forest, tuned and written out as a step function.
struct RfFit {
  StepFunction fn;
  int depth = 0;
  double cv_mape = 0;           // % held-out (k-fold) MAPE of the chosen depth
  std::vector<double> cv_pred;  // held-out prediction of each training row, input order
};

// Fits one forest of y (> 0) against the integer feature x, depth tuned by CV.
RfFit fit_rf(const std::vector<float>& x, const std::vector<float>& y, const RfTrainOptions& o);

// The home forests of one profiled model at one TP degree: one forest per Vidur op of mlp.csv
// (feature: num_tokens), and optionally the all-reduce forest for `tp` workers on one node
// (feature: message bytes) from all_reduce.csv. Times are in milliseconds, as Vidur stores them.
// Plain value type; immutable once trained or loaded.
struct RfTables {
  std::string model_id;
  int tp = 1;
  int mlp_rows = 0;      // profiling rows the op forests were trained on
  int network_rows = 0;  // all_reduce rows used (0 when no network profile)
  double train_seconds = 0;
  std::array<StepFunction, kNumVidurOps> ops;  // empty when the profile never times the op
  std::array<int, kNumVidurOps> depth{};
  std::array<double, kNumVidurOps> cv_mape{};
  StepFunction all_reduce;  // empty when no network profile or tp == 1
  // Held-out MLP-block MAPE (every row predicted by forests that did not see it), %.
  double cv_block_mape = 0;
  double cv_decode_mape = 0;   // tokens ≤ 128
  double cv_prefill_mape = 0;  // tokens > 128
  int cv_n = 0;
  int cv_decode_n = 0;
  int cv_prefill_n = 0;

  // Milliseconds of one layer's `op` for `tokens` tokens; NaN when the op is not profiled.
  double op_ms(VidurOp op, double tokens) const {
    return ops[static_cast<std::size_t>(op)](tokens);
  }
};

// Trains the tables of `model_id` at `tp` from its mlp.csv rows (all TP degrees may be passed;
// rows of other degrees are ignored) and, when given, the rows of all_reduce.csv. Throws
// InputError when the profile has no rows at `tp` or no all-reduce rows for `tp` workers.
RfTables train_rf_tables(const std::vector<VidurMlpRow>& rows, const std::string& model_id, int tp,
                         const std::vector<VidurNetworkRow>* all_reduce,
                         const RfTrainOptions& options);

}  // namespace servesim
