#include "costmodels/rf/rf_cache.hpp"

#include <filesystem>

#include <catch2/catch.hpp>

#include "costmodels/rf/rf_profile_set.hpp"
#include "rf_test_support.hpp"

using namespace servesim;

namespace {

RfTrainOptions quick() {
  RfTrainOptions o;
  o.forest.trees = 20;
  o.depth_grid = {6};
  o.cv_folds = 2;
  o.cv_trees = 10;
  return o;
}

}  // namespace

TEST_CASE("a second load of the same profile is a cache hit with identical tables",
          "[costmodels][rf]") {
  testing::TempDir dir;
  const auto mlp = dir.path() / "a100/meta-llama/Llama-2-7b-hf/mlp.csv";
  testing::write_file(mlp, testing::synthetic_mlp({1, 2}));
  const RfCache cache((dir.path() / "cache").string());
  const RfSource src{"meta-llama/Llama-2-7b-hf", mlp.string(), 2, ""};
  const RfLoaded cold = load_or_train_rf(src, quick(), cache);
  CHECK_FALSE(cold.cache_hit);
  REQUIRE(std::filesystem::exists(cache.path(cold.key)));
  const RfLoaded warm = load_or_train_rf(src, quick(), cache);
  CHECK(warm.cache_hit);
  CHECK(warm.key == cold.key);
  CHECK(warm.tables.tp == 2);
  CHECK(warm.tables.mlp_rows == cold.tables.mlp_rows);
  CHECK(warm.tables.cv_block_mape == cold.tables.cv_block_mape);
  for (std::size_t op = 0; op < kNumVidurOps; ++op) {
    CHECK(warm.tables.ops[op].starts == cold.tables.ops[op].starts);
    CHECK(warm.tables.ops[op].values == cold.tables.ops[op].values);
    CHECK(warm.tables.depth[op] == cold.tables.depth[op]);
  }
}

TEST_CASE("a changed profile, TP or training option misses the cache", "[costmodels][rf]") {
  testing::TempDir dir;
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, testing::synthetic_mlp({1, 2}));
  const RfCache cache((dir.path() / "cache").string());
  RfSource src{"m/x", mlp.string(), 1, ""};
  const RfLoaded first = load_or_train_rf(src, quick(), cache);
  CHECK(load_or_train_rf(src, quick(), cache).cache_hit);

  RfTrainOptions more_trees = quick();
  more_trees.forest.trees = 21;
  CHECK_FALSE(load_or_train_rf(src, more_trees, cache).cache_hit);
  src.tp = 2;
  CHECK_FALSE(load_or_train_rf(src, quick(), cache).cache_hit);
  src.tp = 1;

  testing::write_file(mlp, testing::synthetic_mlp({1, 2}, 1.5));  // re-profiled: 50% slower
  const RfLoaded changed = load_or_train_rf(src, quick(), cache);
  CHECK_FALSE(changed.cache_hit);
  CHECK(changed.key != first.key);
  CHECK(changed.tables.op_ms(VidurOp::kMlpUpProj, 256) ==
        Approx(1.5 * first.tables.op_ms(VidurOp::kMlpUpProj, 256)).epsilon(0.02));
}

TEST_CASE("a corrupt cache file is a miss and is rewritten", "[costmodels][rf]") {
  testing::TempDir dir;
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, testing::synthetic_mlp({1}));
  const RfCache cache((dir.path() / "cache").string());
  const RfSource src{"m/x", mlp.string(), 1, ""};
  const RfLoaded first = load_or_train_rf(src, quick(), cache);
  testing::write_file(cache.path(first.key), "not an HDF5 file");
  const RfLoaded again = load_or_train_rf(src, quick(), cache);
  CHECK_FALSE(again.cache_hit);
  CHECK(load_or_train_rf(src, quick(), cache).cache_hit);
}

TEST_CASE("with caching off nothing is written and every load trains", "[costmodels][rf]") {
  testing::TempDir dir;
  const auto mlp = dir.path() / "a100/m/x/mlp.csv";
  testing::write_file(mlp, testing::synthetic_mlp({1}));
  const RfCache off("");
  const RfSource src{"m/x", mlp.string(), 1, ""};
  CHECK_FALSE(load_or_train_rf(src, quick(), off).cache_hit);
  CHECK_FALSE(load_or_train_rf(src, quick(), off).cache_hit);
}
