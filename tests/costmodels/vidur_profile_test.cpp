#include "costmodels/profile/vidur_profile.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "costmodels/analytical/profile_validation.hpp"
#include "sim/config/input_error.hpp"

using namespace servesim;

namespace {

std::string mlp_header() {
  std::string h;
  for (std::size_t i = 0; i < kNumVidurOps; ++i) {
    h += "time_stats." + std::string(vidur_op_name(static_cast<VidurOp>(i))) + ".median,";
  }
  return h +
         "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,"
         "num_tensor_parallel_workers\n";
}

std::string mlp_row(const std::string& qkv, const std::string& tokens) {
  return "0.01,0.005," + qkv +
         ",0.003,0.02,0.005,0.1,0.007,0.06,0.002,32,8,4096,14336,128256,"
         "True," +
         tokens + ",2\n";
}

}  // namespace

TEST_CASE("the Vidur mlp reader reads median op times and the model columns",
          "[costmodels][profile]") {
  const auto rows = parse_vidur_mlp(mlp_header() + mlp_row("0.065", "16"), "mlp.csv");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].line == 2);
  CHECK(rows[0].num_tokens == 16);
  CHECK(rows[0].tp == 2);
  CHECK(rows[0].ms[static_cast<std::size_t>(VidurOp::kAttnPreProj)] == Approx(0.065));
  CHECK(rows[0].n_kv_head == 8);
  CHECK(rows[0].gated_mlp);
}

TEST_CASE("a light op column may be absent but a GEMM column may not", "[costmodels][profile]") {
  std::string h = mlp_header();
  const std::string post = "time_stats.post_attention_layernorm.median,";
  const std::string row =
      "0.01,0.005,0.065,0.003,0.02,0.1,0.007,0.06,0.002,32,32,2560,10240,"
      "51200,False,4,1\n";
  std::string no_post = h;
  no_post.erase(no_post.find(post), post.size());
  const auto rows = parse_vidur_mlp(no_post + row, "phi.csv");
  CHECK(std::isnan(rows[0].ms[static_cast<std::size_t>(VidurOp::kPostAttentionLayernorm)]));
  std::string no_qkv = h;
  const std::string qkv = "time_stats.attn_pre_proj.median,";
  no_qkv.erase(no_qkv.find(qkv), qkv.size());
  try {
    (void)parse_vidur_mlp(no_qkv, "bad.csv");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("bad.csv:1:") &&
                             Catch::Contains("missing column 'time_stats.attn_pre_proj.median'"));
  }
}

TEST_CASE("a malformed profile row is an error naming its line", "[costmodels][profile]") {
  const std::string good = mlp_row("0.065", "16");
  try {
    (void)parse_vidur_mlp(mlp_header() + good + mlp_row("abc", "16"), "mlp.csv");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("mlp.csv:3:") && Catch::Contains("'abc'"));
  }
  CHECK_THROWS_WITH(parse_vidur_mlp(mlp_header() + mlp_row("0.1", "0"), "m.csv"),
                    Catch::StartsWith("m.csv:2:") && Catch::Contains("'num_tokens'") &&
                        Catch::Contains("expected a whole number in [1, "));
  // Counts beyond any real profile (they would overflow the casts or the per-TP tables).
  CHECK_THROWS_WITH(parse_vidur_mlp(mlp_header() + mlp_row("0.1", "1e12"), "m.csv"),
                    Catch::StartsWith("m.csv:2:") && Catch::Contains("'num_tokens'"));
  CHECK_THROWS_WITH(parse_vidur_mlp(mlp_header() + mlp_row("0.1", "inf"), "m.csv"),
                    Catch::StartsWith("m.csv:2:") && Catch::Contains("not a finite number"));
  // A GEMM's time must be there and finite: nan, inf or an empty cell is not dropped silently.
  for (const std::string bad : {"nan", "inf", ""}) {
    INFO("qkv cell '" << bad << "'");
    CHECK_THROWS_WITH(
        parse_vidur_mlp(mlp_header() + good + mlp_row(bad, "32"), "m.csv"),
        Catch::StartsWith("m.csv:3:") && Catch::Contains("time_stats.attn_pre_proj.median"));
  }
  // An empty light-op cell reads as "not timed".
  std::string no_act = good;
  no_act.replace(no_act.find("0.007"), 5, "");
  CHECK(std::isnan(parse_vidur_mlp(mlp_header() + no_act, "m.csv")[0]
                       .ms[static_cast<std::size_t>(VidurOp::kMlpAct)]));
  CHECK_THROWS_WITH(parse_vidur_mlp("num_tokens,num_tokens\n1,2\n", "d.csv"),
                    Catch::StartsWith("d.csv:1:") && Catch::Contains("appears twice"));
  CHECK_THROWS_WITH(parse_vidur_mlp(mlp_header() + "1,2,3\n", "m.csv"),
                    Catch::StartsWith("m.csv:2:") && Catch::Contains("3 fields"));
  // A header without rows is an error, not an empty result the tools then index.
  CHECK_THROWS_WITH(parse_vidur_mlp(mlp_header(), "m.csv"),
                    Catch::StartsWith("m.csv:2: no profile rows"));
}

TEST_CASE("a GPU's profiles are its own folder's, never every GPU's below the root",
          "[costmodels][profile]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "servesim_gpu_profiles_test";
  fs::remove_all(root);
  for (const char* gpu : {"a100", "h100"}) {
    fs::create_directories(root / gpu / "org" / "m");
    std::ofstream(root / gpu / "org" / "m" / "mlp.csv") << mlp_header() << mlp_row("0.1", "16");
  }
  const auto a100 = find_gpu_profiles(root.string(), {"A100-80GB", "A100"}, "--profiles");
  REQUIRE(a100.files.size() == 1);
  CHECK(fs::path(a100.files[0].second).parent_path().parent_path().parent_path() == root / "a100");
  // The GPU's own folder works too (named after the GPU, any case, trailing slash or not); a
  // GPU with no folder is an error, not every row below root.
  CHECK(find_gpu_profiles((root / "h100").string(), {"x", "H100"}, "--profiles").files.size() == 1);
  CHECK(find_gpu_profiles((root / "h100").string() + "/", {"h100"}, "--profiles").files.size() ==
        1);
  // Another GPU's folder is not this GPU's profile.
  CHECK_THROWS_WITH(find_gpu_profiles((root / "a100").string(), {"h100", "h100-sxm"}, "--profiles"),
                    Catch::Contains("holds <org>/<model>/mlp.csv itself, but its name 'a100' is "
                                    "not the GPU's (h100)"));
  CHECK_THROWS_WITH(find_gpu_profiles(root.string(), {"l40s", "L40S"}, "--profiles"),
                    Catch::Contains("--profiles: no mlp.csv for GPU l40s under"));
  fs::remove_all(root);
}

TEST_CASE("the network reader reads all_reduce rows and rejects a missing size column",
          "[costmodels][profile]") {
  const std::string h =
      ",time_stats.all_reduce.min,time_stats.all_reduce.max,time_stats.all_reduce.mean,"
      "time_stats.all_reduce.median,time_stats.all_reduce.std,rank,num_workers,size,collective,"
      "devices_per_node,max_devices_per_node\n";
  const auto rows = parse_vidur_network(h + "0,0.03,0.07,0.05,0.043,0.01,0,2,2048,all_reduce,2,8\n",
                                        "ar.csv", "all_reduce");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].ms == Approx(0.043));
  CHECK(rows[0].size_bytes == 2048);
  CHECK(rows[0].num_workers == 2);
  CHECK(rows[0].devices_per_node == 2);
  std::string bad = h;
  bad.replace(bad.find("size,"), 5, "");
  CHECK_THROWS_WITH(parse_vidur_network(bad, "ar.csv", "all_reduce"),
                    Catch::Contains("ar.csv:1:") && Catch::Contains("'size'"));
  CHECK_THROWS_AS(read_vidur_network("/nonexistent/all_reduce.csv", "all_reduce"), InputError);
}
