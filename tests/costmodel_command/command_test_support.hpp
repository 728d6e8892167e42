#pragma once

#include <filesystem>
#include <string>

#include "tests/costmodels/home_profiles.hpp"
#include "tools/costmodel/costmodel_args.hpp"

namespace servesim::testing {

// `costmodel <command> --profiles <shared compute folder> --gpu <gpu> [--json]`.
inline CostmodelArgs profile_args(const std::string& gpu, bool json) {
  CostmodelArgs a;
  a.profiles = vidur_compute_dir();
  a.gpu = gpu;
  a.json = json;
  return a;
}
inline CostmodelArgs a100_json() { return profile_args("a100", true); }

// `costmodel predict --json` of Llama-2-7b on `gpu`: one prefill chunk and decodes at `context`.
inline CostmodelArgs predict_json(const std::string& gpu, int prefill_tokens, int decodes,
                                  int context) {
  CostmodelArgs a;
  a.gpu = gpu;
  a.model = "meta-llama/Llama-2-7b-hf";
  a.prefill_tokens = prefill_tokens;
  a.decodes = decodes;
  a.context = context;
  a.json = true;
  return a;
}

// An empty scratch folder of this name under the system's temporary folder.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace servesim::testing
