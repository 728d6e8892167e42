#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>

#include "costmodels/rf/rf_profile_set.hpp"
#include "rf_test_support.hpp"
#include "sim/config/input_error.hpp"

using namespace servesim;

TEST_CASE("a malformed mlp.csv is an input error naming the file and line", "[costmodels][rf]") {
  testing::TempDir dir;
  std::string text = testing::synthetic_mlp({1});
  const std::size_t third_line = text.find('\n', text.find('\n') + 1) + 1;
  text.replace(third_line, 5, "abc,d");  // first cell of line 3 is not a number
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, text);
  try {
    (void)load_or_train_rf({"m/x", mlp.string(), 1, ""}, RfTrainOptions{}, RfCache(""));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains(mlp.string() + ":3"));
  }
}

TEST_CASE("an mlp.csv without num_tokens is an input error naming the column", "[costmodels][rf]") {
  testing::TempDir dir;
  std::string text = testing::synthetic_mlp({1});
  text.replace(text.find("num_tokens"), 10, "tokens_num");
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, text);
  CHECK_THROWS_WITH(load_or_train_rf({"m/x", mlp.string(), 1, ""}, RfTrainOptions{}, RfCache("")),
                    Catch::Contains("num_tokens"));
}

TEST_CASE("a TP degree the profile lacks is an input error listing the profiled degrees",
          "[costmodels][rf]") {
  testing::TempDir dir;
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, testing::synthetic_mlp({1, 2}));
  CHECK_THROWS_WITH(load_or_train_rf({"m/x", mlp.string(), 4, ""}, RfTrainOptions{}, RfCache("")),
                    Catch::Contains("no rows for TP 4 (profiled: 1, 2)"));
}

TEST_CASE("profiles are found under profiling/, profiling/compute/ or the GPU folder",
          "[costmodels][rf]") {
  testing::TempDir dir;
  testing::write_file(dir.path() / "compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv",
                      testing::synthetic_mlp({1}));
  for (const std::string& d :
       {dir.str(), (dir.path() / "compute").string(), (dir.path() / "compute/a100").string()}) {
    const RfProfileSet s = RfProfileSet::open(d, {"A100", "a100-80gb"});
    CHECK(s.model_ids() == std::vector<std::string>{"meta-llama/Llama-2-7b-hf"});
    CHECK(s.mlp_path("META-LLAMA/llama-2-7b-hf").has_value());
  }
  CHECK_THROWS_WITH(RfProfileSet::open(dir.str(), {"h100"}), Catch::Contains("no mlp.csv"));
}

TEST_CASE("a model is matched to a profile by name, else by its layer dimensions",
          "[costmodels][rf]") {
  testing::TempDir dir;
  testing::write_file(dir.path() / "a100/meta-llama/Llama-2-7b-hf/mlp.csv",
                      testing::synthetic_mlp({1}));
  const RfProfileSet s = RfProfileSet::open(dir.str(), {"a100"});
  ModelSpec m;
  m.name = "someone/llama-2-7b-finetune";
  m.hidden_size = 4096;
  m.num_heads = 32;
  m.num_kv_heads = 32;
  m.intermediate_size = 11008;
  m.vocab_size = 32000;
  m.gated_mlp = true;
  CHECK(s.require_model(m).first == "meta-llama/Llama-2-7b-hf");
  m.num_kv_heads = 8;
  CHECK_THROWS_WITH(s.require_model(m), Catch::Contains("profiled: meta-llama/Llama-2-7b-hf"));
}

TEST_CASE("forests trained on 80% of a real profile predict the held-out 20% within 3%",
          "[costmodels][rf][data]") {
  const std::string path = testing::data_compute_dir() + "/a100/meta-llama/Llama-2-7b-hf/mlp.csv";
  REQUIRE(std::filesystem::exists(path));
  std::vector<VidurMlpRow> train;
  std::vector<VidurMlpRow> held_out;
  int i = 0;
  for (const VidurMlpRow& r : read_vidur_mlp(path)) {
    if (r.tp != 1) continue;
    (++i % 5 == 0 ? held_out : train).push_back(r);
  }
  REQUIRE(held_out.size() > 40);
  RfTrainOptions o;
  o.forest.trees = 100;
  const RfTables t = train_rf_tables(train, "meta-llama/Llama-2-7b-hf", 1, nullptr, o);
  double ape = 0;
  for (const VidurMlpRow& r : held_out) {
    double pred = 0;
    double meas = 0;
    for (std::size_t op = 0; op < kNumVidurOps; ++op) {
      pred += t.ops[op](r.num_tokens);
      meas += r.ms[op];
    }
    ape += std::abs(pred - meas) / meas;
  }
  const double mape = 100 * ape / static_cast<double>(held_out.size());
  INFO("held-out MLP-block MAPE " << mape << "%");
  CHECK(mape < 3.0);
  CHECK(mape > 0.0);
  CHECK(t.cv_block_mape > 0.0);
  CHECK(t.cv_block_mape < 5.0);
}
