#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "tests/costmodel_command/command_test_support.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
namespace fs = std::filesystem;

TEST_CASE(
    "costmodel crossval prices each group of A100 models with constants fitted on the others "
    "and stays within the A100 target",
    "[costmodels][accuracy]") {
  testing::require_vidur_profiles();
  CostmodelArgs a = testing::a100_json();
  const nlohmann::json j = nlohmann::json::parse(run_crossval(a));
  REQUIRE(j["models"].size() == 6);
  // Models sharing a GEMM shape are held out together: the 70B-class models share hidden 8192
  // and 8 KV heads (q/k/v and o), Llama-2-7b and Llama-3-8B their o projection.
  const nlohmann::json folds = {{"codellama/CodeLlama-34b-Instruct-hf", "meta-llama/Llama-2-70b-hf",
                                 "meta-llama/Meta-Llama-3-70B"},
                                {"meta-llama/Llama-2-7b-hf", "meta-llama/Meta-Llama-3-8B"},
                                {"microsoft/phi-2"}};
  CHECK(j["groups"] == folds);
  CHECK(j["models"]["microsoft/phi-2"]["group"] == 3);
  // In sample the fit reproduces the shipped constants, so it scores what validate scores.
  const nlohmann::json v = nlohmann::json::parse(run_validate(a));
  CHECK(j["in_sample"]["block_mape"].get<double>() ==
        Approx(v["mlp_block"]["mape"].get<double>()).margin(0.02));
  // Held out: measured 3.55% (in sample 3.39%) at commit time; the A100 target is 5%.
  CHECK(j["held_out"]["block_mape"].get<double>() < 4.0);
  CHECK(j["held_out"]["n"] == 7041);
  // phi-2 alone runs LayerNorm and GELU: held out, they take RMSNorm's and SiLU-and-mul's.
  CHECK(j["models"]["microsoft/phi-2"]["kernels_as_sibling"] ==
        nlohmann::json({"layernorm as rmsnorm", "gelu as silu_mul"}));
  CHECK(j["models"]["microsoft/phi-2"]["kernels_in_sample"].empty());
  CHECK(j["models"]["microsoft/phi-2"]["kernels_from_hardware_file"].empty());
  // The held-out figure of Llama-2-7b is exactly a fit on the models outside its group.
  const std::string held = "meta-llama/Llama-2-7b-hf";
  const GpuSpec& g = testing::configs_gpu("a100");
  testing::HomeProfiles rest = testing::a100_home_profiles();
  std::vector<VidurMlpRow> held_rows;
  ModelSpec held_model;
  for (std::size_t i = rest.models.size(); i-- > 0;) {
    const std::string& id = rest.models[i].name;
    if (id != held && id != "meta-llama/Meta-Llama-3-8B") continue;
    if (id == held) {
      held_rows = rest.files[i].second;
      held_model = rest.models[i];
    }
    rest.files.erase(rest.files.begin() + static_cast<std::ptrdiff_t>(i));
    rest.models.erase(rest.models.begin() + static_cast<std::ptrdiff_t>(i));
  }
  REQUIRE(rest.models.size() == 4);
  const AnalyticalParams p =
      fit_home_constants(rest.files, rest.models, g, AnalyticalParams::for_gpu(g)).params;
  const ProfileValidation out = validate_profile(held_rows, held, g, &held_model, p, {});
  CHECK(j["models"][held]["held_out"]["block_mape"].get<double>() ==
        Approx(out.slices.front().block.mape()));
  // Nothing held out is priced with its own fit: other start values for the kernels only
  // phi-2 runs leave its held-out figure as it was.
  const fs::path hw = fs::temp_directory_path() / "servesim_crossval_start" / "a100-80gb.yaml";
  fs::remove_all(hw.parent_path());
  fs::create_directories(hw.parent_path());
  {
    std::ifstream in(std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/a100-80gb.yaml");
    std::ofstream o(hw);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("    layernorm:", 0) == 0)
        line = "    layernorm: {floor_ns: 20000, bw_fraction: 0.1, row_elem_ns: 0}";
      if (line.rfind("    gelu:", 0) == 0)
        line = "    gelu: {floor_ns: 20000, bw_fraction: 0.1, row_elem_ns: 0}";
      o << line << "\n";
    }
  }
  CostmodelArgs moved = a;
  moved.hardware_file = hw.string();
  // The moved constants are read: validate, which prices with them, scores phi-2 otherwise.
  const nlohmann::json kept = nlohmann::json::parse(run_validate(a));
  const nlohmann::json shifted = nlohmann::json::parse(run_validate(moved));
  CHECK(shifted["models"]["microsoft/phi-2"]["mlp_block"]["mape"].get<double>() >
        kept["models"]["microsoft/phi-2"]["mlp_block"]["mape"].get<double>() + 1);
  const nlohmann::json k = nlohmann::json::parse(run_crossval(moved));
  CHECK(k["models"]["microsoft/phi-2"]["held_out"]["block_mape"].get<double>() ==
        Approx(j["models"]["microsoft/phi-2"]["held_out"]["block_mape"].get<double>()));
  fs::remove_all(hw.parent_path());
  // One model has nothing to leave out.
  const fs::path one = fs::temp_directory_path() / "servesim_crossval_one" / "a100";
  fs::remove_all(one.parent_path());
  fs::create_directories(one / "microsoft" / "phi-2");
  fs::copy_file(testing::vidur_compute_dir() + "/a100/microsoft/phi-2/mlp.csv",
                one / "microsoft/phi-2/mlp.csv");
  a.profiles = one.string();
  CHECK_THROWS_WITH(run_crossval(a), Catch::Contains("needs two or more groups of models"));
  fs::remove_all(one.parent_path());
}
