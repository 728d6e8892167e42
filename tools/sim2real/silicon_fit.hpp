#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/sim2real/fit.hpp"
#include "tools/sim2real/silicon.hpp"

namespace servesim::sim2real {

// The silicon rows an engine profile declares as its fit set (`fitted.silicon_rows:` {backend,
// model, system, isl, osl}): one engine's rows of one model on one system at one ISL/OSL. Every
// other row of a silicon file is reported as not fitted.
struct SiliconFitSet {
  std::string backend;
  std::string model;
  std::string system;
  std::int64_t isl = 0;
  std::int64_t osl = 0;
  bool contains(const SiliconRow& row) const {
    return row.backend == backend && row.model_path == model && row.system == system &&
           row.isl == isl && row.osl == osl && row.mode == "agg";
  }
};

// The fit set profile `name` (configs/engines/<name>.yaml) declares; none when it declares
// none. A declaration missing a key is an InputError at it.
std::optional<SiliconFitSet> silicon_fit_set(const std::string& name);

struct SiliconFit {
  std::string engine;  // the profile fitted
  std::string gpu;     // catalog name of the fit rows' GPU
  EngineConstants constants;
  double objective = 0;           // mean APE over the fit rows' mean TTFT and TPOT (%)
  std::vector<std::string> rows;  // ids of the fit rows
  std::string log;                // one line per evaluation
  std::string yaml;               // the entries to paste into the profile
};

// Fits the engine profile of `backend` (options.engines) on the rows of `rows` in its declared
// fit set: the host time of a CUDA-graph and of an eager step, the decode-attention bandwidth
// fraction and the request overhead, by the coordinate search and bounds of `sim2real --fit`
// (fit.hpp), from the hardware file's constants and no overhead, minimising the mean APE of the
// rows' mean TTFT and TPOT. The profile must declare a fit set with at least one runnable row.
SiliconFit fit_silicon_engine(const std::vector<SiliconRow>& rows, const std::string& backend,
                              const SiliconOptions& options);

}  // namespace servesim::sim2real
