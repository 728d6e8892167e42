#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "costmodels/analytical/profile_validation.hpp"
#include "costmodels/profile/vidur_profile.hpp"
#include "sim/hardware/catalog.hpp"

namespace servesim::testing {

// The repository's Vidur compute profiles, data/vidur/profiling/compute (built by append: GCC 12
// misreads string + literal at -O2).
inline const std::string& vidur_compute_dir() {
  static const std::string dir = [] {
    std::string d(SERVESIM_DATA_DIR);
    d.append("/vidur/profiling/compute");
    return d;
  }();
  return dir;
}

// The repository's catalog (configs/), read once.
inline Catalog& configs_catalog() {
  static Catalog c({std::string(SERVESIM_SOURCE_DIR) + "/configs"});
  return c;
}

inline const GpuSpec& configs_gpu(const std::string& name) {
  return configs_catalog().gpu(name, ConfigNode::parse("x", "test"));
}

// Fails the running test when the Vidur profiles are missing from data/.
inline void require_vidur_profiles() {
  INFO("the Vidur compute profiles: " << vidur_compute_dir());
  REQUIRE(std::filesystem::is_directory(vidur_compute_dir()));
}

// The A100 home profiles as `fit_home_constants` takes them: (path, rows) and each model.
struct HomeProfiles {
  std::vector<std::pair<std::string, std::vector<VidurMlpRow>>> files;
  std::vector<ModelSpec> models;
};
inline HomeProfiles a100_home_profiles() {
  HomeProfiles h;
  for (const auto& [id, path] : find_mlp_profiles(vidur_compute_dir() + "/a100")) {
    h.files.emplace_back(path, read_vidur_mlp(path));
    const ModelSpec* m = nullptr;
    for (const auto& n : configs_catalog().model_names()) {
      if (n == id) m = &configs_catalog().model(n, ConfigNode::parse("x", "test"));
    }
    h.models.push_back(model_from_profile(h.files.back().second.front(), id, m));
  }
  return h;
}

}  // namespace servesim::testing
