#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "costmodels/analytical/analytical_params.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/gpu_spec.hpp"

namespace servesim {

// Profiles as `fit_home_constants` takes them: (path, rows) per file and the model of each.
using ProfileFiles = std::vector<std::pair<std::string, std::vector<VidurMlpRow>>>;

// Leave-one-group-out folds: models that time one projection GEMM (the same M × K × N, as any
// of q/k/v, o, gate+up or down, at any TP degree) are held out together, or the held-out rows
// would have been fitted as another model's. Each fold is a list of indices into `files`,
// ascending; folds in order of first member.
std::vector<std::vector<std::size_t>> gemm_shape_folds(const ProfileFiles& files,
                                                       const std::vector<ModelSpec>& models);

// Each file's rows priced with the constants fit_home_constants finds on the files of every
// other fold (held out), beside the fit on all of them (in sample). Kernels no training model
// runs take a sibling's constants (LayerNorm as RMSNorm, GELU as SiLU-and-mul), else the fit on
// all files, else the start constants `params`. All vectors but `folds` hold one entry per file.
struct CrossValidation {
  std::vector<std::vector<std::size_t>> folds;
  std::vector<std::size_t> fold_of;
  std::vector<ProfileValidation> in_sample;
  std::vector<ProfileValidation> held_out;
  std::vector<std::vector<std::string>> kernels_as_sibling;  // "layernorm as rmsnorm"
  std::vector<std::vector<std::string>> kernels_in_sample;
  std::vector<std::vector<std::string>> kernels_from_hardware_file;
};

// `ids` names each file's model in the validations; `folds` is gemm_shape_folds' partition.
// The folds' fits are independent and deterministic, so they run in parallel.
CrossValidation cross_validate(const ProfileFiles& files, const std::vector<ModelSpec>& models,
                               const std::vector<std::string>& ids,
                               std::vector<std::vector<std::size_t>> folds, const GpuSpec& gpu,
                               const AnalyticalParams& params);

}  // namespace servesim
