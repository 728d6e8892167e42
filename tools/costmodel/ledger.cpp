#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "sim/hardware/catalog.hpp"
#include "tools/costmodel/transfer_study.hpp"

namespace servesim {

std::string run_ledger(const RfTransferArgs& args) {
  RfTransferArgs a = args;
  a.use_cache = false;  // calibration cost = cold training
  const TransferResult r = compute_transfer(a);
  Catalog catalog(Catalog::default_dirs());
  const int gpus = static_cast<int>(catalog.gpu_names().size());
  const int rows = r.home_rows;
  struct Entry {
    std::string method;
    std::string rows;
    double seconds;
    std::string coverage;
    double home;
    double transfer;
  };
  const std::vector<Entry> entries = {
      {"analytical", "0 (A100 constants fitted once, declared in hardware file)",
       r.analytical_seconds, fmt::format("{}/{} (any datasheet)", gpus, gpus),
       r.home_analytical.block.mape(), r.analytical.block.mape()},
      {"rf", std::to_string(rows), r.rf_train_seconds,
       fmt::format("1/{} (profiled GPU only)", gpus), r.home_rf.block.mape(),
       r.rf_verbatim.block.mape()},
      {"rf_scaled", std::to_string(rows), r.rf_train_seconds,
       fmt::format("{}/{} (any datasheet)", gpus, gpus), r.home_rf.block.mape(),
       r.rf_scaled.block.mape()},
  };
  if (a.json) {
    nlohmann::json j;
    for (const Entry& e : entries) {
      j["methods"][e.method] = {{"profiling_rows", e.rows},
                                {"calibration_seconds", e.seconds},
                                {"coverage", e.coverage},
                                {"home_mape", e.home},
                                {"transfer_mape", e.transfer}};
    }
    j["home"] = r.home_gpu;
    j["target"] = r.target_gpu;
    j["models"] = r.models;
    j["rf_heldout_home_mape"] = r.home_rf_cv_block.mape();
    j["notes"] =
        "MAPE of the MLP block (sum of a row's mlp.csv ops). rf calibration = cold training "
        "of every (model, TP) forest table scored (cache off); analytical calibration = wall "
        "time to price every row. rf home MAPE is in-sample; rf_heldout_home_mape is k-fold.";
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "Cost/coverage ledger, home {} -> target {}, models: {}\n"
      "MAPE = MLP block of mlp.csv rows; RF home MAPE in-sample (k-fold held out: {:.2f}%); "
      "calibration = cold training (no cache).\n\n",
      r.home_gpu, r.target_gpu, fmt::join(r.models, ", "), r.home_rf_cv_block.mape());
  out += fmt::format("{:<11} {:<58} {:>12} {:<26} {:>9} {:>13}\n", "method", "profiling rows",
                     "calibration", "GPUs covered", "home", "transfer");
  for (const Entry& e : entries) {
    out += fmt::format("{:<11} {:<58} {:>10.3f} s {:<26} {:>8.2f}% {:>12.2f}%\n", e.method, e.rows,
                       e.seconds, e.coverage, e.home, e.transfer);
  }
  return out;
}

}  // namespace servesim
