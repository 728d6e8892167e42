#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tools/sim2real/experiments.hpp"

namespace servesim::test {

// The repository's measured runs, data/sim2real/experiments.csv (a test fails when it is missing).
inline std::string experiments_csv() {
  const std::string p =
      (std::filesystem::path(SERVESIM_DATA_DIR) / "sim2real/experiments.csv").string();
  REQUIRE(std::filesystem::exists(p));
  return p;
}

// A small regenerated run (no measured data needed): shared-prefix chat on one H100, vLLM v0.15.1.
inline sim2real::Experiment synthetic_run(const std::string& id, const std::string& model,
                                          double rate = 1.0, int line = 0) {
  sim2real::Experiment e;
  e.id = id;
  e.line = line;
  e.model = model;
  e.vllm_image = "vllm/vllm-openai:v0.15.1";
  e.hardware = "H100";
  e.precision = "BF16";
  e.stages = {{rate, 20.0}};
  e.system_prompt_len = 100;
  e.question_len = 300;
  e.output_len = 50;
  e.num_groups = 2;
  e.users_per_group = 2;
  return e;
}

// The run of `runs` with this id (a test fails when there is none).
inline const sim2real::Experiment& find_run(const std::vector<sim2real::Experiment>& runs,
                                            const std::string& id) {
  const auto it = std::find_if(runs.begin(), runs.end(), [&](const auto& e) { return e.id == id; });
  REQUIRE(it != runs.end());
  return *it;
}

}  // namespace servesim::test
