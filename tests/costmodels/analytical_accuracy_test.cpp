#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "costmodels/analytical/calibration.hpp"
#include "costmodels/analytical/costmodel_commands.hpp"
#include "costmodels/analytical/profile_validation.hpp"
#include "sim/hardware/catalog.hpp"
#include "tests/costmodels/rf/rf_test_support.hpp"
#include "tests/costmodels/test_specs.hpp"

using namespace servesim;
namespace fs = std::filesystem;

namespace {

const std::string kCompute = std::string(SERVESIM_SHARED_DIR) + "/data/vidur/profiling/compute";

Catalog& catalog() {
  static Catalog c({std::string(SERVESIM_SOURCE_DIR) + "/configs"});
  return c;
}

const GpuSpec& gpu(const std::string& name) {
  return catalog().gpu(name, ConfigNode::parse("x", "test"));
}

ProfileValidation validate(const std::string& gpu_name, const std::string& dir,
                           const std::string& model) {
  const GpuSpec& g = gpu(gpu_name);
  const auto rows = read_vidur_mlp(kCompute + "/" + dir + "/" + model + "/mlp.csv");
  return validate_profile(rows, model, g, nullptr, AnalyticalParams::for_gpu(g), AnalyticalTerms{});
}

// The A100 home profiles as `fit_home_constants` takes them: (path, rows) and each model.
struct HomeProfiles {
  std::vector<std::pair<std::string, std::vector<VidurMlpRow>>> files;
  std::vector<ModelSpec> models;
};
HomeProfiles a100_profiles() {
  HomeProfiles h;
  for (const auto& [id, path] : find_mlp_profiles(kCompute + "/a100")) {
    h.files.emplace_back(path, read_vidur_mlp(path));
    const ModelSpec* m = nullptr;
    for (const auto& n : catalog().model_names()) {
      if (n == id) m = &catalog().model(n, ConfigNode::parse("x", "test"));
    }
    h.models.push_back(model_from_profile(h.files.back().second.front(), id, m));
  }
  return h;
}

// Whether ../shared's Vidur profiles are missing (the test then passes with a warning, as
// DATA.md asks of tests that need them).
bool profiles_absent() {
  if (fs::is_directory(kCompute)) return false;
  WARN("skipped: " << kCompute << " is absent");
  return true;
}

// `costmodel <command> --profiles <shared compute folder> --gpu <gpu> [--json]`.
CostmodelArgs profile_args(const std::string& gpu, bool json) {
  CostmodelArgs a;
  a.profiles = kCompute;
  a.gpu = gpu;
  a.json = json;
  return a;
}
CostmodelArgs a100_json() { return profile_args("a100", true); }

// An empty scratch folder of this name under the system's temporary folder.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE(
    "the analytical model keeps Llama-2-7B MLP-block error within its targets on A100 "
    "and H100",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  // A100 is the home profile (constants fitted there); H100 is the transfer test (nothing
  // fitted on it). Thresholds are the measured values at commit time plus a small margin.
  const ProfileValidation a = validate("a100", "a100", "meta-llama/Llama-2-7b-hf");
  CHECK(a.slices.front().block.mape() < 5.0);
  CHECK(a.slices.front().prefill_block.mape() < 5.0);
  CHECK(a.slices.front().decode_block.mape() < 6.0);
  for (std::size_t i = 1; i < a.slices.size(); ++i) {
    INFO("A100 TP" << a.slices[i].tp);
    CHECK(a.slices[i].block.mape() < 6.0);
  }
  const ProfileValidation h = validate("h100", "h100", "meta-llama/Llama-2-7b-hf");
  CHECK(h.slices.front().block.mape() < 7.0);
  CHECK(h.slices.front().decode_block.mape() < 8.0);
  for (std::size_t i = 1; i < h.slices.size(); ++i) {
    INFO("H100 TP" << h.slices[i].tp);
    CHECK(h.slices[i].block.mape() < 9.0);
  }
}

TEST_CASE("costmodel fit on the A100 profile reproduces the shipped A100 constants",
          "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  const GpuSpec& g = gpu("a100");
  const AnalyticalParams shipped = AnalyticalParams::for_gpu(g);
  const HomeProfiles home = a100_profiles();
  REQUIRE(home.files.size() == 6);
  const FitReport fit = fit_home_constants(home.files, home.models, g, shipped);
  CHECK(fit.params.gemm_efficiency == Approx(shipped.gemm_efficiency).margin(0.002));
  CHECK(fit.params.gemm_launch_ns == Approx(shipped.gemm_launch_ns).margin(50));
  CHECK(fit.params.wave_ns == Approx(shipped.wave_ns).margin(50));
  CHECK(fit.params.lone_cta_utilization == Approx(shipped.lone_cta_utilization).margin(0.01));
  CHECK(fit.params.eta_max == Approx(shipped.eta_max).margin(0.002));
  CHECK(fit.params.x_half == Approx(shipped.x_half).margin(0.002));
  CHECK(fit.params.light_l2_resident_fraction ==
        Approx(shipped.light_l2_resident_fraction).margin(1e-3));
  CHECK(fit.params.light_l2_speedup == Approx(shipped.light_l2_speedup).margin(1e-3));
  CHECK(shipped.light_l2_resident_fraction > 0.1);  // the norms find their input in L2
  CHECK(shipped.light_l2_speedup > 1.5);
  for (LightKernel k :
       {LightKernel::kRmsNorm, LightKernel::kLayerNorm, LightKernel::kRope, LightKernel::kSiluMul,
        LightKernel::kGelu, LightKernel::kAdd, LightKernel::kEmbedding}) {
    INFO(light_kernel_name(k));
    const auto i = static_cast<std::size_t>(k);
    CHECK(fit.params.light[i].floor_ns == Approx(shipped.light[i].floor_ns).margin(2));
    CHECK(fit.params.light[i].bw_fraction == Approx(shipped.light[i].bw_fraction).margin(1e-3));
    CHECK(fit.params.light[i].row_elem_ns == Approx(shipped.light[i].row_elem_ns).margin(1e-3));
  }
  // The per-token kernels walk their row: the A100 rows need the row latency; elementwise
  // kernels have no row to walk.
  for (LightKernel k : {LightKernel::kRmsNorm, LightKernel::kRope, LightKernel::kSiluMul}) {
    CHECK(fit.params.light[static_cast<std::size_t>(k)].row_elem_ns > 0.1);
  }
  for (LightKernel k : {LightKernel::kGelu, LightKernel::kAdd, LightKernel::kEmbedding}) {
    CHECK(fit.params.light[static_cast<std::size_t>(k)].row_elem_ns == 0);
  }
}

TEST_CASE("on every catalog GPU more tokens are never faster and more bandwidth never slower",
          "[costmodels][monotone]") {
  const ModelSpec model = testing::llama2_7b_like();
  AnalyticalCostModel::Options o;
  o.table_max_tokens = 2048;
  const AnalyticalCostModel cm(o);
  std::deque<GpuSpec> faster_specs;  // the model caches by spec address: keep them all alive
  for (const std::string& name : catalog().gpu_names()) {
    INFO("gpu " << name);
    const GpuSpec& g = gpu(name);
    GpuSpec& faster = faster_specs.emplace_back(g);
    faster.memory_bw_gb_per_s *= 1.5;
    for (int tp : {1, 4}) {
      const ReplicaSpec r = testing::replica_of(g, model, tp);
      const ReplicaSpec rf = testing::replica_of(faster, model, tp);
      SimTime prev = 0;
      for (std::int32_t t = 1; t <= 4096; t = t * 3 / 2 + 1) {
        BatchShape b;
        b.prefills.push_back({t, 0});
        const SimTime now = cm.step(b, r).total_ns;
        CHECK(now >= prev);
        CHECK(cm.step(b, rf).total_ns <= now);
        prev = now;
      }
      prev = 0;
      for (int n = 1; n <= 256; n *= 2) {
        BatchShape b;
        b.decode_contexts.assign(static_cast<std::size_t>(n), 1000);
        const SimTime now = cm.step(b, r).total_ns;
        CHECK(now >= prev);
        CHECK(cm.step(b, rf).total_ns <= now);
        prev = now;
      }
    }
  }
}

TEST_CASE("a replica that names no topology is priced with its GPU's own links",
          "[costmodels][analytical]") {
  // H100 PCIe cards pair through bridges: the default prices pairs, all-to-all is refused.
  const AnalyticalCostModel cm(AnalyticalCostModel::Options{});
  const ModelSpec model = testing::llama2_7b_like();
  BatchShape b;
  b.prefills.push_back({4096, 0});
  // At TP 2 the pair is one bridge: NVLink, unlike PCIe.
  ReplicaSpec r = testing::replica_of(gpu("h100-pcie"), model, 2);
  REQUIRE(r.topology.empty());
  CHECK(r.links() == "pairwise_nvlink");
  const StepCost unnamed = cm.step(b, r);
  r.topology = "pairwise_nvlink";
  CHECK(cm.step(b, r).total_ns == unnamed.total_ns);
  r.topology = "pcie";
  CHECK(cm.step(b, r).total_ns > unnamed.total_ns);
  r.topology = "nvlink";
  CHECK_THROWS_WITH(cm.step(b, r), Catch::Contains("links only pairs of cards"));
}

namespace {
// `costmodel predict --json` of Llama-2-7b on `gpu`: one prefill chunk and decodes at `context`.
CostmodelArgs predict_json(const std::string& gpu, int prefill_tokens, int decodes, int context) {
  CostmodelArgs a;
  a.gpu = gpu;
  a.model = "meta-llama/Llama-2-7b-hf";
  a.prefill_tokens = prefill_tokens;
  a.decodes = decodes;
  a.context = context;
  a.json = true;
  return a;
}
}  // namespace

TEST_CASE("costmodel predict launches as simulate would: the engine's graph mode and capture size",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a = predict_json("h100", 100, 8, 500);
  // No engine, no --graph-mode: decode_only, so a step with a prefill runs eager.
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "eager");
  // vLLM V1's profile brings piecewise graphs, captured up to min(2 × 128, 512) = 256 tokens.
  a.cost_model_yaml = "{kind: analytical, engine: vllm-v1}";
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "piecewise CUDA graph");
  a.prefill_tokens = 300;
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "eager");
  a.max_num_seqs = 256;  // capture size 512
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "piecewise CUDA graph");
  a.graph_max_tokens = 0;  // explicitly no limit
  a.prefill_tokens = 3000;
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "piecewise CUDA graph");
  // An explicit mode wins over the engine's.
  a.graph_mode = "decode_only";
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "eager");
}

TEST_CASE("costmodel predict prices one batch the way the chosen CUDA-graph mode launches it",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a = predict_json("h100", 10, 80, 500);  // a cached prompt's last chunk
  const auto v0 = nlohmann::json::parse(run_predict(a));
  CHECK(v0["launch"] == "eager");
  a.graph_mode = "piecewise";
  a.graph_max_tokens = 256;
  const auto v1 = nlohmann::json::parse(run_predict(a));
  CHECK(v1["launch"] == "piecewise CUDA graph");
  CHECK(v1["total_ns"].get<double>() < v0["total_ns"].get<double>());
  CHECK(v1["breakdown_ns"]["attention"] == v0["breakdown_ns"]["attention"]);
  a.prefill_tokens = 300;  // 380 tokens > 256: eager again
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "eager");
  a.prefill_tokens = 0;
  CHECK(nlohmann::json::parse(run_predict(a))["launch"] == "full CUDA graph");
  a.graph_mode = "full";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--graph-mode: unknown 'full'"));
  // FP8 weights: GEMMs at the FP8 peak and half the weight bytes; refused without FP8 cores.
  a.graph_mode = "piecewise";
  a.decodes = 8;
  const auto bf16 = nlohmann::json::parse(run_predict(a));
  a.precision = "fp8";
  const auto fp8 = nlohmann::json::parse(run_predict(a));
  CHECK(fp8["breakdown_ns"]["gemm"].get<double>() <
        0.7 * bf16["breakdown_ns"]["gemm"].get<double>());
  a.gpu = "a100";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("has no FP8 tensor cores"));
}

TEST_CASE("costmodel predict refuses a TP degree that does not divide the attention heads",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a;
  a.gpu = "a100";
  a.model = "meta-llama/Llama-2-7b-hf";
  a.prefill_tokens = 16;
  a.tp = 3;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--tp: 3 does not divide the 32 attention "
                                                    "heads of meta-llama/Llama-2-7b-hf"));
  a.tp = 4;
  CHECK_NOTHROW(run_predict(a));
  // A decode needs a context, and no sequence may outgrow the model's 4096 positions.
  a.decodes = 2;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("expected --context ≥ 1"));
  a.context = 4090;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("a sequence of 4106 tokens exceeds "
                                                    "meta-llama/Llama-2-7b-hf's context (4096"));
  a.context = 4000;
  CHECK_NOTHROW(run_predict(a));
  // A flag has no line or column.
  a.model = "foo/bar";
  CHECK_THROWS_WITH(run_predict(a), Catch::StartsWith("--model: unknown model 'foo/bar'"));
  a.gpu = "h900";
  CHECK_THROWS_WITH(run_predict(a), Catch::StartsWith("--gpu: unknown GPU 'h900'"));
}

TEST_CASE(
    "priced with the Vidur profiler's library setting every H100 model and TP degree meets the "
    "issue's targets and the A100 is untouched",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  CostmodelArgs a;
  a.profiles = kCompute;
  a.gpu = "h100";
  a.json = true;
  const nlohmann::json plain = nlohmann::json::parse(run_validate(a));
  a.engine = "vidur-profiler";
  const nlohmann::json stack = nlohmann::json::parse(run_validate(a));
  CHECK(stack["engine"] == "vidur-profiler");
  CHECK(stack["engine_applies"] == true);
  CHECK(plain["engine"].is_null());
  CHECK(plain["engine_applies"].is_null());
  // Measured at commit time: 6.64% with the hardware file's ladder, 5.21% with the profiler's.
  CHECK(plain["mlp_block"]["mape"].get<double>() > 6.0);
  CHECK(stack["mlp_block"]["mape"].get<double>() < 5.5);
  CHECK(stack["mlp_block"]["decode_mape"].get<double>() < 5.0);
  std::size_t cells = 0;
  for (const auto& [model, m] : stack["models"].items()) {
    for (const auto& [tp, s] : m["tp"].items()) {
      INFO(model << " TP" << tp);
      CHECK(s["mlp_block"]["mape"].get<double>() <= 7.0);
      CHECK(s["mlp_block"]["decode_mape"].get<double>() <= 8.0);
      ++cells;
    }
  }
  CHECK(cells == 13);  // 4 models: three at TP 1/2/4/8, phi-2 at TP 1
  for (const char* op : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}) {
    INFO(op);
    CHECK(stack["ops"][op]["mape"].get<double>() <= 12.0);
  }
  // No A100 section: the A100 figures are the hardware file's to the last digit, and the text
  // says so.
  a.gpu = "a100";
  const std::string with = run_validate(a);
  a.engine.clear();
  nlohmann::json a100_with = nlohmann::json::parse(with);
  CHECK(a100_with["engine_applies"] == false);
  a100_with["engine"] = nullptr;  // as without --engine
  a100_with["engine_applies"] = nullptr;
  CHECK(a100_with == nlohmann::json::parse(run_validate(a)));
  a.engine = "vidur-profiler";
  a.json = false;
  CHECK_THAT(run_validate(a),
             Catch::StartsWith("GPU a100-80gb, engine vidur-profiler (no constants for this GPU)"));
  a.engine = "no-such-stack";
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("unknown engine profile 'no-such-stack'"));
  a.engine = "null";  // a name, not YAML's null
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("unknown engine profile 'null'"));
  a.engine = "  ";
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("expected an engine profile"));
  // An inline profile that sets nothing is a profile (sim2real's tests use one) that applies to
  // no GPU, and the JSON says so.
  a.engine = "{name: plain}";
  a.json = true;
  CHECK(nlohmann::json::parse(run_validate(a))["engine_applies"] == false);
  // A fit under an engine may run, but not write the engine's constants as the GPU's own.
  a.engine = "vidur-profiler";
  a.write_file = "unused.yaml";
  CHECK_THROWS_WITH(run_fit(a), Catch::Contains("--write with --engine"));
  CHECK_FALSE(fs::exists("unused.yaml"));
}

TEST_CASE(
    "costmodel fit keeps GEMM efficiency and memory plateau and light bandwidth within the "
    "datasheet",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  // Without its 64-row tiles the A100 ladder pads small-M GEMMs, and the unbounded search
  // pushed the plateau bandwidth to 1.06 of the datasheet, a file the loader then refused.
  const GpuSpec& g = gpu("a100");
  AnalyticalParams start = AnalyticalParams::for_gpu(g);
  start.tiles = {{256, 128}, {128, 256}, {128, 128}, {128, 64}};
  const HomeProfiles home = a100_profiles();
  const FitReport fit = fit_home_constants(home.files, home.models, g, start);
  CHECK(fit.params.eta_max == Approx(1.0));  // the bound binds
  CHECK(fit.params.gemm_efficiency <= 1.0);
  // At half the clock the A100 rows want an efficiency of about 1.5 (0.75 at full clock): the
  // bound holds it at 1.
  start = AnalyticalParams::for_gpu(g);
  start.clock_fraction = 0.5;
  const FitReport slow = fit_home_constants(home.files, home.models, g, start);
  CHECK(slow.params.gemm_efficiency == Approx(1.0));
  CHECK(slow.params.eta_max <= 1.0);
  // On a GPU of half the A100's bandwidth the residual add would stream at about 1.7 of the
  // datasheet: the bound holds its fraction at 1.
  GpuSpec narrow = g;
  narrow.memory_bw_gb_per_s /= 2;
  const FitReport light =
      fit_home_constants(home.files, home.models, narrow, AnalyticalParams::for_gpu(g));
  CHECK(light.params.light[static_cast<std::size_t>(LightKernel::kAdd)].bw_fraction == Approx(1.0));
  for (const auto& l : light.params.light) CHECK(l.bw_fraction <= 1.0);
}

TEST_CASE(
    "costmodel fit writes only a file the loader reads back, and never another GPU's constants "
    "into a GPU's file",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  const fs::path dir = fresh_dir("servesim_fit_write_test");
  CostmodelArgs a = profile_args("h100", false);
  // Fitted on the H100 rows (a test of the tool, not shipped constants), the file loads.
  a.write_file = (dir / "h100.yaml").string();
  CHECK_THAT(run_fit(a), Catch::Contains("light add") && Catch::Contains("light L2 reuse"));
  CostmodelArgs check = profile_args("h100", true);
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

TEST_CASE(
    "an engine profile names each GPU once, is not empty, and a file without a name is "
    "named after the file",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  const fs::path dir = fresh_dir("servesim_engine_file_test");
  CostmodelArgs a = profile_args("h100", false);
  a.model = "microsoft/phi-2";
  // h100 is an alias of h100-sxm: two sections for one GPU, of which one would silently win.
  a.engine =
      "{gpus: {h100-sxm: {analytical: {gemm: {tiles: [[128, 128]]}}}, h100: {analytical: {gemm: "
      "{tiles: [[64, 64]]}}}}}";
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("GPU 'h100' is h100-sxm, listed already"));
  std::ofstream(dir / "empty.yaml").close();
  a.engine = (dir / "empty.yaml").string();
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("an empty engine profile"));
  std::ofstream(dir / "my-stack.yaml")
      << "gpus:\n  h100: {analytical: {gemm: {tiles: [[128, 128]]}}}\n";
  a.engine = (dir / "my-stack.yaml").string();
  CHECK_THAT(run_validate(a), Catch::StartsWith("GPU h100-sxm, engine my-stack — "));
  fs::remove_all(dir);
}

TEST_CASE("costmodel validate scores a GPU with no profile folder as an error, not on every GPU",
          "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  CostmodelArgs a;
  a.profiles = kCompute;
  a.gpu = "l40s";
  CHECK_THROWS_WITH(run_validate(a), Catch::Contains("--profiles: no mlp.csv for GPU l40s"));
  a.gpu = "a100-80gb";  // the catalog name finds the a100 folder through the alias
  a.json = true;
  CHECK(nlohmann::json::parse(run_validate(a))["mlp_block"]["n"] == 7041);
}

TEST_CASE(
    "the A100 profiles repeat their GEMM shapes across models to 1-1.5% and run identical work "
    "faster in files of higher TP",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  const nlohmann::json r = nlohmann::json::parse(run_validate(a100_json()))["reproducibility"];
  // Llama-2-70B, Llama-3-70B and CodeLlama-34B share hidden 8192 and 8 KV heads: their q/k/v
  // and o projections are the same GEMMs in three files (the MLPs only in the two 70Bs).
  for (const char* op : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"}) {
    INFO(op);
    CHECK(r[op]["shapes"].get<int>() > 1000);
    CHECK(r[op]["floor_mape"].get<double>() > 0.3);
    // q/k/v 1.45%: its Llama-2-7b / Llama-3-8B pairs cross TP files (below); the rest ≤ 0.94%.
    CHECK(r[op]["floor_mape"].get<double>() < 2.0);
    CHECK(r[op]["model_mape"].get<double>() > r[op]["floor_mape"].get<double>());
    CHECK(r[op]["model_mape"].get<double>() > 0);
  }
  // Same-shaped GEMMs time alike; a key that mixed shapes would scatter far more than 1.5%.
  // q/k/v is keyed by its fused width, so Llama-2-7b at TP 2/4/8 joins Llama-3-8B at TP 1/2/4.
  CHECK(r["attn_pre_proj"]["n"].get<int>() == 4758);
  // Between files (times >= 20 us): those cross-TP q/k/v pairs run faster in the file of the
  // higher TP degree (measured -6.9 / -4.6 / -0.7%), and the norms and adds 2.0% (TP1 -> TP2) to
  // 7.2% (TP1 -> TP8) faster, while files of equal TP differ by 1.6% (GEMMs) and 1.2% (norms and
  // adds): a harness effect per file.
  const nlohmann::json b = nlohmann::json::parse(run_validate(a100_json()))["between_files"];
  for (const auto& e : b["gemm"]["across_tp"]) {
    INFO("GEMMs TP" << e["lower_tp"] << " -> TP" << e["higher_tp"]);
    CHECK(e["median_pct"].get<double>() < 0);
  }
  CHECK(b["gemm"]["across_tp"].size() == 3);
  CHECK(b["gemm"]["equal_tp"]["median_pct"].get<double>() < 2.0);
  CHECK(b["norm_add"]["across_tp"].size() == 6);
  for (const auto& e : b["norm_add"]["across_tp"]) {
    INFO("norms and adds TP" << e["lower_tp"] << " -> TP" << e["higher_tp"]);
    CHECK(e["median_pct"].get<double>() < -1.0);
    if (e["lower_tp"] == 1 && e["higher_tp"] == 8) CHECK(e["median_pct"].get<double>() < -5.0);
  }
  CHECK(b["norm_add"]["equal_tp"]["median_pct"].get<double>() < 1.5);
}

TEST_CASE("costmodel predict prices the replica's links and power cap as simulate does",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a = predict_json("a100", 0, 32, 1000);
  a.tp = 4;
  const auto nvlink = nlohmann::json::parse(run_predict(a));  // A100's default: NVLink
  a.topology = "pcie";
  const auto pcie = nlohmann::json::parse(run_predict(a));
  CHECK(pcie["breakdown_ns"]["collective"].get<double>() >
        nvlink["breakdown_ns"]["collective"].get<double>());
  CHECK(pcie["breakdown_ns"]["gemm"] == nvlink["breakdown_ns"]["gemm"]);
  // Pairs on NVLink, the ring's other hops on PCIe: at TP4 the ring runs at PCIe speed, in the
  // roofline model as in the analytical one (a 4096-token prefill: bandwidth, not latency).
  a.prefill_tokens = 4096;
  a.decodes = 0;
  a.context = 0;
  for (const std::string kind : {"analytical", "roofline"}) {
    INFO(kind);
    a.cost_model_yaml = "kind: " + kind;
    a.topology = "nvlink";
    const double all = nlohmann::json::parse(run_predict(a))["breakdown_ns"]["collective"];
    a.topology = "pairwise_nvlink";
    const double pairs = nlohmann::json::parse(run_predict(a))["breakdown_ns"]["collective"];
    a.topology = "pcie";
    const double none = nlohmann::json::parse(run_predict(a))["breakdown_ns"]["collective"];
    CHECK(pairs > 2 * all);
    CHECK(pairs == Approx(none).epsilon(0.05));
  }
  a.cost_model_yaml = "kind: analytical";
  // H100 PCIe cards pair through bridges: pairwise by default, all-to-all NVLink refused.
  a.gpu = "h100-pcie";
  a.topology = "";
  const auto bridged = nlohmann::json::parse(run_predict(a));
  a.topology = "pairwise_nvlink";
  CHECK(nlohmann::json::parse(run_predict(a)) == bridged);
  a.topology = "nvlink";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--topology: h100-pcie links only pairs"));
  // L40S has no NVLink: pcie is its default, and nvlink is refused rather than read as PCIe.
  a.gpu = "l40s";
  a.topology = "";
  const auto l40s = nlohmann::json::parse(run_predict(a));
  CHECK(l40s["topology"] == "pcie");  // the links it priced
  a.topology = "pcie";
  CHECK(nlohmann::json::parse(run_predict(a)) == l40s);
  a.topology = "pairwise_nvlink";
  CHECK_THROWS_WITH(run_predict(a), Catch::StartsWith("--topology: l40s has no NVLink") &&
                                        Catch::Contains("expected topology pcie"));
  // A cap slows the step (the clock falls); outside the board's limits, or under a cost model
  // that ignores caps, it is refused.
  a = predict_json("a100", 2048, 0, 0);
  const double tdp = nlohmann::json::parse(run_predict(a))["total_ns"].get<double>();
  a.power_cap_w = 150;
  const auto capped = nlohmann::json::parse(run_predict(a));
  CHECK(capped["total_ns"].get<double>() > tdp);
  CHECK(capped["power_cap_w"] == 150.0);
  a.power_cap_w = 50;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--power-cap-w: 50 W is outside a100-80gb's "
                                                    "power limits (expected 100 to 400 W)"));
  a.power_cap_w = 300;
  a.cost_model_yaml = "kind: roofline";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--power-cap-w: the roofline cost model "
                                                    "does not price power caps"));
}

TEST_CASE(
    "costmodel crossval prices each group of A100 models with constants fitted on the others "
    "and stays within the A100 target",
    "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  CostmodelArgs a = a100_json();
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
  const GpuSpec& g = gpu("a100");
  HomeProfiles rest = a100_profiles();
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
  fs::copy_file(kCompute + "/a100/microsoft/phi-2/mlp.csv", one / "microsoft/phi-2/mlp.csv");
  a.profiles = one.string();
  CHECK_THROWS_WITH(run_crossval(a), Catch::Contains("needs two or more groups of models"));
  fs::remove_all(one.parent_path());
}

TEST_CASE("costmodel validate names the profiled models it had to price without a catalog file",
          "[costmodels][accuracy]") {
  if (profiles_absent()) return;
  // phi-2's profile under a name the catalog does not know: its LayerNorm and parallel block
  // are unknown, so the run says what it assumed.
  const fs::path dir = fs::temp_directory_path() / "servesim_uncataloged" / "a100";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir / "acme" / "phi-clone");
  fs::copy_file(kCompute + "/a100/microsoft/phi-2/mlp.csv", dir / "acme/phi-clone/mlp.csv");
  CostmodelArgs a;
  a.profiles = dir.string();
  a.gpu = "a100";
  CHECK_THAT(run_validate(a), Catch::Contains("note: acme/phi-clone is not in the catalog: priced "
                                              "with RMSNorm and a serial attention-then-MLP "
                                              "block"));
  a.json = true;
  CHECK(nlohmann::json::parse(run_validate(a))["not_in_catalog"] ==
        nlohmann::json::array({"acme/phi-clone"}));
  a.profiles = kCompute;
  CHECK(nlohmann::json::parse(run_validate(a))["not_in_catalog"].empty());
  fs::remove_all(dir.parent_path());
}

TEST_CASE("costmodel predict places a replica on nodes of --gpus-per-node GPUs",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a;
  a.gpu = "h100-sxm";
  a.model = "meta-llama/Llama-2-70b-hf";
  a.prefill_tokens = 2048;
  a.tp = 8;
  a.pp = 2;
  a.json = true;
  const auto collective = [&] {
    return nlohmann::json::parse(run_predict(a))["breakdown_ns"]["collective"].get<double>();
  };
  // Two nodes of 8: the hand-off's eighths cross the NICs; one node of 16: NVLink; a slower NIC
  // moves the same 2048 × 8192 × 2 × 2 bytes, an eighth per rank, at a quarter of the rate.
  const double two_nodes = collective();
  a.cluster.gpus_per_node = 16;
  const double one_node = collective();
  CHECK(one_node < two_nodes);
  a.cluster.gpus_per_node = 8;
  a.cluster.nic_gb_per_s = 12.5;
  CHECK(collective() - two_nodes ==
        Approx(2.0 * 2048 * 8192 * 2 / 8 * (1 / 12.5 - 1 / 50.0)).epsilon(1e-6));
  // Tensor parallelism stays inside a node.
  a.cluster.gpus_per_node = 4;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--tp: tp 8 spans more than one node of 4") &&
                                        Catch::Contains("--gpus-per-node"));
}
