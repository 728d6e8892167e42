#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/analytical_terms.hpp"
#include "costmodels/analytical/cross_validation.hpp"
#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "sim/hardware/catalog.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim::costmodel_cmd {

// What every analytical subcommand starts from: the catalog, the --gpu (or --hardware) spec with
// its constants and --engine applied, and the --profiles files of that GPU (and --model).
struct Context {
  Catalog catalog{Catalog::default_dirs()};
  GpuSpec gpu;
  AnalyticalParams params;
  std::shared_ptr<const EngineProfile> engine;  // --engine, applied to params; null when unset
  std::vector<std::pair<std::string, std::string>> profiles;  // model id, path

  // "GPU h100-sxm" or "GPU h100-sxm, engine vidur-profiler" for the text reports' first line.
  std::string title() const {
    if (!engine) return "GPU " + gpu.name;
    return fmt::format("GPU {}, engine {}{}", gpu.name, engine->name,
                       engine->covers(gpu) ? "" : " (no constants for this GPU)");
  }
  // The JSON reports' "gpu", "engine" and whether it has constants for the GPU
  // ("engine_applies"); both null without --engine.
  void stamp(nlohmann::json& j) const {
    j["gpu"] = gpu.name;
    j["engine"] = engine ? nlohmann::json(engine->name) : nlohmann::json(nullptr);
    j["engine_applies"] = engine ? nlohmann::json(engine->covers(gpu)) : nlohmann::json(nullptr);
  }
};

// Reads --gpu, --hardware, --engine and, when `need_profiles`, the GPU's mlp.csv files.
Context load(const CostmodelArgs& a, bool need_profiles);

// The catalog's model of profile id `id` (case-insensitive); null when the catalog lacks it.
const ModelSpec* catalog_model(Catalog& catalog, const std::string& id);

// The profiled models the catalog lacks: their dimensions come from the profile rows, but not
// the norm kind or the block layout, which then take model_from_profile's defaults.
std::vector<std::string> uncataloged(Context& c);
// One note line per uncataloged model, for the text reports.
std::string uncataloged_text(Context& c);

// Every profile of `c` validated with `params` and `terms`.
std::vector<ProfileValidation> validate_all(Context& c, const AnalyticalParams& params,
                                            const AnalyticalTerms& terms,
                                            bool keep_residuals = false);

// The profiles of `c` as `fit_home_constants` takes them: (path, rows) and the model of each.
struct FitData {
  ProfileFiles files;
  std::vector<ModelSpec> models;
};
FitData read_fit_data(Context& c);

// MAPE, mean signed error and count of `e`, as the JSON reports give a band of rows.
nlohmann::json band_json(const ErrorStats& e);

}  // namespace servesim::costmodel_cmd
