#pragma once

#include <functional>
#include <string>
#include <vector>

#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/rf/rf_tables.hpp"

namespace servesim {

// Arguments of `costmodel transfer` and `costmodel ledger`.
struct RfTransferArgs {
  std::string profiles;         // Vidur profiling/compute folder (home GPU)
  std::string target_profiles;  // "" = `profiles`
  std::string home = "a100";
  std::string target = "h100";
  std::string model;  // "" = every model profiled on both GPUs
  std::string cache_dir;
  bool use_cache = true;
  bool json = false;
  RfTrainOptions train;
  // Called as each model × TP's forests are ready ("Llama-2-7b TP2, trained 4.1 s" or "…, cached"),
  // for a tool's progress line; may be empty.
  std::function<void(const std::string&)> on_forests;
};

// The cross-GPU 2×2 on Vidur's mlp.csv: the home forests scored on the home profile and on the
// target's, verbatim and spec-scaled, beside the analytical model (whether a forest trained on
// one GPU's profile prices another GPU as well as the datasheet-driven model does). Ground truth is
// the median time of each op of a row; the MLP block is the sum of the row's ops (as in `costmodel
// validate`); decode = rows with ≤ 128 tokens. No target row is used for training.
struct TransferResult {
  std::string home_gpu;
  std::string target_gpu;
  std::vector<std::string> models;
  std::vector<std::string> skipped;  // "model TPn": no home rows at that TP
  int home_rows = 0;
  int target_rows = 0;
  ProfileValidation::Slice home_rf;  // in-sample: the forests were trained on these rows
  ErrorStats home_rf_cv_block, home_rf_cv_decode, home_rf_cv_prefill;  // k-fold held out
  ProfileValidation::Slice home_analytical;
  ProfileValidation::Slice rf_verbatim;
  ProfileValidation::Slice rf_scaled;             // datasheet-roofline ratio
  ProfileValidation::Slice rf_scaled_analytical;  // analytical-model ratio (hybrid)
  ProfileValidation::Slice analytical;
  double rf_train_seconds = 0;  // wall time of loading or training every forest table
  int rf_tables = 0;
  int rf_cache_hits = 0;
  double analytical_seconds = 0;  // wall time of pricing every row with the analytical model
};

TransferResult compute_transfer(const RfTransferArgs& args);
// Text or JSON (args.json) reports (tools/costmodel/transfer.cpp, ledger.cpp); bad input throws
// InputError; none prints.
std::string run_transfer(const RfTransferArgs& args);
// The cost/coverage ledger (profiling rows, calibration time, GPUs covered and MAPE per
// method): cold (uncached) RF training is timed.
std::string run_ledger(const RfTransferArgs& args);

}  // namespace servesim
