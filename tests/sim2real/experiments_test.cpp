#include "tools/sim2real/experiments.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "sim/util/csv_reader.hpp"
#include "tests/sim2real/experiments_data.hpp"
#include "tools/sim2real/score.hpp"

using namespace servesim::sim2real;

using servesim::test::experiments_csv;

TEST_CASE("experiments.csv reads into 21 runs whose traces resolve against its folder",
          "[sim2real][experiments][data]") {
  const std::string csv = experiments_csv();
  const auto runs = read_experiments(csv);
  REQUIRE(runs.size() == 21);
  int traced = 0;
  for (const auto& e : runs) {
    INFO(e.id);
    CHECK(!e.model.empty());
    CHECK(e.hardware == "H100");
    CHECK(!e.stages.empty());
    if (!e.trace_file.empty()) {
      ++traced;
      CHECK(std::filesystem::exists(e.trace_file));
      CHECK(std::filesystem::path(e.trace_file).is_absolute());
    }
  }
  CHECK(traced == 9);
  // Given relative to the working folder, the CSV still yields absolute trace paths (a config
  // that `sim2real --out` writes elsewhere must find its trace).
  for (const auto& e : read_experiments(std::filesystem::relative(csv).string())) {
    if (!e.trace_file.empty()) CHECK(std::filesystem::path(e.trace_file).is_absolute());
  }
  const auto& codegen = *std::find_if(runs.begin(), runs.end(),
                                      [](const auto& e) { return e.id == "tv-l2-7b-codegen"; });
  CHECK(codegen.tp == 1);
  CHECK(codegen.kv_blocks_total_gpu == 7462);
  REQUIRE(codegen.stages.size() == 2);
  CHECK(codegen.stages[1].rate == 10.0);
  CHECK(codegen.real.e2e_mean == Approx(2080.74));
  CHECK(codegen.real.itl_mean == Approx(10.576));
}

TEST_CASE("the measured summaries follow from the traces with numpy quantiles and mean-based ITL",
          "[sim2real][experiments][data]") {
  const std::string csv = experiments_csv();
  for (const auto& e : read_experiments(csv)) {
    if (e.trace_file.empty()) continue;
    INFO(e.id);
    const auto trace = read_trace(e.trace_file);
    REQUIRE(static_cast<std::int64_t>(trace.size()) == e.n_requests_trace);
    std::vector<Latency> ok;
    double out = 0;
    std::int64_t failed = 0;
    for (const auto& r : trace) {
      if (r.error) {
        ++failed;
        continue;
      }
      ok.push_back({r.e2e_ms, r.ttft_ms});
      out += r.output_tokens;
    }
    CHECK(failed == e.n_failed_trace);
    const Metrics m = metrics_of(ok, out / static_cast<double>(ok.size()));
    for (std::size_t i = 0; i < metric_names().size(); ++i) {
      INFO(metric_names()[i]);
      CHECK(metric(m, i) == Approx(metric(e.real, i)).epsilon(2e-4).margin(0.002));
    }
  }
}

namespace {

// experiments.csv with one cell of run `id` replaced, written to a temp folder beside copies of
// nothing else (trace paths then do not resolve, which these checks never reach).
std::string with_cell(const std::string& csv, const std::string& id, const std::string& column,
                      const std::string& value) {
  std::ifstream in(csv);
  std::string header_line;
  std::getline(in, header_line);
  servesim::CsvReader csv_in(csv);
  const auto header = csv_in.header();
  const auto col =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), column) - header.begin());
  REQUIRE(col < header.size());
  std::stringstream out;
  out << header_line << "\n";
  while (csv_in.next_row()) {
    std::vector<std::string> fields(csv_in.size());
    for (std::size_t i = 0; i < fields.size(); ++i) fields[i] = csv_in.field(i);
    if (fields.size() == header.size() && fields[0] == id) fields[col] = value;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      std::string f = fields[i];
      if (f.find_first_of(",\"\n") != std::string::npos) {
        std::string q = "\"";
        for (char c : f) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        f = q + "\"";
      }
      out << (i ? "," : "") << f;
    }
    out << "\n";
  }
  const auto path = std::filesystem::temp_directory_path() / "servesim_bad_experiments.csv";
  std::ofstream(path) << out.str();
  return path.string();
}

}  // namespace

TEST_CASE("bad experiments.csv cells are errors naming the line and the column",
          "[sim2real][experiments][data]") {
  const std::string csv = experiments_csv();
  // Run 21 is regenerated (no trace).
  using Catch::Contains;
  CHECK_THROWS_WITH(read_experiments(with_cell(csv, "21", "tp", "")),
                    Contains("servesim_bad_experiments.csv:") &&
                        Contains(": column 'tp': expected a whole number ≥ 1, got ''"));
  CHECK_THROWS_WITH(read_experiments(with_cell(csv, "21", "tp", "4294967298")),
                    Contains("column 'tp': expected a whole number in [0, 2147483647]"));
  CHECK_THROWS_WITH(read_experiments(with_cell(csv, "21", "output_len", "")),
                    Contains("column 'output_len': expected a whole number ≥ 1"));
  CHECK_THROWS_WITH(read_experiments(with_cell(csv, "21", "summ_ttft_p99_ms", "0")),
                    Contains("column 'summ_ttft_p99_ms': expected a positive time in ms"));
  CHECK_THROWS_WITH(read_experiments(with_cell(csv, "21", "exp_id", "20")),
                    Contains("column 'exp_id': expected a run id not used by an earlier row"));
  CHECK_NOTHROW(read_experiments(with_cell(csv, "21", "notes", "a, \"quoted\" note")));
}
