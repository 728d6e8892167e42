#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "costmodels/analytical/calibration.hpp"
#include "tests/costmodels/rf/rf_test_support.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;

namespace {
std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("fit --write replaces the analytical section and keeps the records it did not refit",
          "[costmodels][fit]") {
  const testing::TempDir dir;
  const auto file = dir.path() / "my-gpu.yaml";
  testing::write_file(file,
                      "name: my-gpu\n"
                      "analytical:\n"
                      "  gemm: {efficiency: 0.1}\n"
                      "  fitted:\n"
                      "    collectives: {nvlink_efficiency: 0.5, rows: 3}\n"
                      "    gemm: {efficiency: 0.1, rows: 2}\n"
                      "host: {eager_floor_ns: 1, graph_floor_ns: 1, slope_ns: 0}\n");
  FitReport report;
  report.params = AnalyticalParams::for_gpu(testing::a100_like());
  report.params.light[static_cast<std::size_t>(LightKernel::kRope)].row_elem_ns = 0.3;
  report.params.row_ctas_per_sm = 1;
  report.yaml_fitted = {"gemm: {efficiency: 0.7, rows: 9}"};
  write_fitted_section(file.string(), report, "unused: template\n");
  const std::string text = read_all(file);
  CHECK_THAT(text, Catch::Contains("name: my-gpu\n"));
  CHECK_THAT(text, Catch::Contains("host: {eager_floor_ns: 1"));
  CHECK_THAT(text, Catch::Contains("    gemm: {efficiency: 0.7, rows: 9}"));
  CHECK_THAT(text, Catch::Contains("    collectives: {nvlink_efficiency: 0.5, rows: 3}"));
  CHECK_THAT(text, !Catch::Contains("efficiency: 0.1"));
  CHECK_THAT(text, !Catch::Contains("unused"));
  // The written section is complete: a hardware file reads it back, new constants included.
  AnalyticalParams back;
  const ConfigNode node = ConfigNode::load_file(file.string());
  back.apply_analytical(node.at("analytical"), /*complete=*/true);
  CHECK(back.light[static_cast<std::size_t>(LightKernel::kRope)].row_elem_ns == Approx(0.3));
  CHECK(back.row_ctas_per_sm == 1);
  CHECK(back.gemm_efficiency == Approx(report.params.gemm_efficiency).margin(1e-4));
}

TEST_CASE("fit --write to a new file starts from the GPU's own hardware file",
          "[costmodels][fit]") {
  const testing::TempDir dir;
  const auto file = dir.path() / "new.yaml";
  FitReport report;
  report.params = AnalyticalParams::for_gpu(testing::a100_like());
  report.yaml_fitted = {"gemm: {efficiency: 0.7, rows: 9}"};
  write_fitted_section(file.string(), report,
                       "name: my-gpu\nsms: 108\nanalytical: {gemm: {efficiency: 0.2}}\n"
                       "host: {eager_floor_ns: 5}\n");
  const std::string text = read_all(file);
  CHECK_THAT(text, Catch::StartsWith("name: my-gpu\nsms: 108\n"));
  CHECK_THAT(text, Catch::Contains("host: {eager_floor_ns: 5}"));
  CHECK_THAT(text, Catch::Contains("    gemm: {efficiency: 0.7, rows: 9}"));
  CHECK_THAT(text, !Catch::Contains("efficiency: 0.2"));
}
