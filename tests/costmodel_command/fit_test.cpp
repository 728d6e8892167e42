#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/hardware/catalog.hpp"
#include "tests/costmodel_command/command_test_support.hpp"
#include "tests/costmodels/rf/rf_test_support.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
namespace fs = std::filesystem;

TEST_CASE(
    "costmodel fit writes only a file the loader reads back, and never another GPU's constants "
    "into a GPU's file",
    "[costmodels][accuracy]") {
  testing::require_vidur_profiles();
  const fs::path dir = testing::fresh_dir("servesim_fit_write_test");
  CostmodelArgs a = testing::profile_args("h100", false);
  // Fitted on the H100 rows (a test of the tool, not shipped constants), the file loads.
  a.write_file = (dir / "h100.yaml").string();
  CHECK_THAT(run_fit(a), Catch::Contains("light add") && Catch::Contains("light L2 reuse"));
  CostmodelArgs check = testing::profile_args("h100", true);
  check.hardware_file = a.write_file;
  CHECK(nlohmann::json::parse(run_validate(check))["mlp_block"]["n"] == 3393);
  // Another GPU's file is neither read as this GPU's nor overwritten with its constants.
  check.hardware_file = std::string(SERVESIM_SOURCE_DIR) + "/configs/hardware/a100-80gb.yaml";
  CHECK_THROWS_WITH(run_validate(check),
                    Catch::Contains("--hardware: ") && Catch::Contains("describes a100-80gb"));
  fs::copy_file(check.hardware_file, dir / "a100.yaml");
  const std::string before = testing::read_file(dir / "a100.yaml");
  a.write_file = (dir / "a100.yaml").string();
  CHECK_THROWS_WITH(run_fit(a), Catch::Contains("is a100-80gb's hardware file, not h100-sxm's"));
  CHECK(testing::read_file(dir / "a100.yaml") == before);
  fs::remove_all(dir);
}

TEST_CASE("costmodel fit --write to a new file on the A100 profile reproduces the shipped file",
          "[costmodels][fit][data]") {
  const std::string profiles = testing::vidur_compute_dir() + "/a100";
  REQUIRE(std::filesystem::exists(profiles));
  // The new file starts as the hardware file's own text (comments and layout too), so the fit
  // that produced the shipped constants writes it byte for byte.
  const testing::TempDir dir;
  CostmodelArgs a;
  a.profiles = profiles;
  a.gpu = "a100-80gb";
  a.write_file = (dir.path() / "mine.yaml").string();
  (void)run_fit(a);
  Catalog catalog(Catalog::default_dirs());
  const std::string shipped = catalog.gpu("a100-80gb", ConfigNode::flag("test")).file.file();
  CHECK(testing::read_file(a.write_file) == testing::read_file(shipped));
}
