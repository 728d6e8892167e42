#include "sim/hardware/catalog.hpp"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/config/input_error.hpp"

using namespace servesim;
using Catch::Matchers::Contains;

TEST_CASE("Every shipped hardware and model file loads", "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  REQUIRE(cat.gpu_names().size() >= 6);
  for (const auto& name : cat.gpu_names()) {
    const GpuSpec& g = cat.gpu(name, here);
    CHECK(g.sms > 0);
    CHECK(g.bf16_tflops > 0);
    CHECK(g.memory_bw_gb_per_s > 0);
    if (!g.gpc_sms.empty()) {
      int sum = 0;
      for (int s : g.gpc_sms) sum += s;
      CHECK(sum == g.sms);
    }
  }
  REQUIRE(cat.model_names().size() >= 13);
  for (const auto& name : cat.model_names()) {
    const ModelSpec& m = cat.model(name, here);
    CHECK(m.name == name);  // file path spells the Hugging Face id
    CHECK(m.num_heads % m.num_kv_heads == 0);
    CHECK(m.num_params() > 1e8);
  }
}

TEST_CASE("GPUs are found by alias case-insensitively and models by Hugging Face id", "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  CHECK(cat.gpu("H100", here).name == "h100-sxm");
  CHECK(cat.gpu("h200", here).sms == 132);
  const ModelSpec& m = cat.model("meta-llama/Llama-3.1-8B", here);
  CHECK(m.num_layers == 32);
  CHECK(m.num_kv_heads == 8);
  // Llama-3.1-8B has about 8.03 B parameters.
  CHECK(m.num_params() == Approx(8.03e9).epsilon(0.01));
  CHECK(cat.model("meta-llama/Llama-2-7b-hf", here).num_params() == Approx(6.74e9).epsilon(0.01));
}

TEST_CASE("Unknown names are errors that list the known ones", "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("gpu: h900", "run.yaml").at("gpu");
  CHECK_THROWS_WITH(cat.gpu("h900", here),
                    Contains("run.yaml:1:6: gpu: unknown GPU 'h900' (did you mean 'h100'? known:"));
  CHECK_THROWS_WITH(cat.gpu("h900", here), Contains("h200"));
  CHECK_THROWS_AS(cat.model("meta-llama/Llama-9-1T", here), InputError);
}

TEST_CASE("A hardware file with an unknown key, a wrong GPC sum or no PCIe bandwidth is rejected",
          "[catalog]") {
  const auto bad_key = ConfigNode::parse(
      "arch: hopper\nsms: 4\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nl2_mb: 1\ntdp_w: 1\nsm_count: 3\n",
      "hw.yaml");
  CHECK_THROWS_WITH(Catalog::load_gpu(bad_key), Contains("hw.yaml:9:1: unknown key 'sm_count'"));
  const auto bad_sum = ConfigNode::parse(
      "arch: hopper\nsms: 4\ngpc_sms: [2, 1]\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nl2_mb: 1\ntdp_w: 1\n",
      "hw.yaml");
  CHECK_THROWS_WITH(Catalog::load_gpu(bad_sum), Contains("sum to 3, expected sms = 4"));
  // Without PCIe a TP or PP hand-off would take no time at all.
  const auto no_pcie = ConfigNode::parse(
      "arch: ada\nsms: 4\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nl2_mb: 1\ntdp_w: 1\npcie_gb_per_s: 0\n",
      "hw.yaml");
  CHECK_THROWS_WITH(Catalog::load_gpu(no_pcie),
                    Contains("hw.yaml:9:16") && Contains("pcie_gb_per_s"));
  // NVSwitch multicast (NCCL's NVLS) needs NVLink through a switch, not bridged pairs.
  const std::string base =
      "arch: hopper\nsms: 4\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nl2_mb: 1\ntdp_w: 1\nnvlink_gb_per_s: 600\n";
  CHECK(Catalog::load_gpu(
            ConfigNode::parse(base + "nvswitch_multicast: true\ninterconnect: {kind: nvswitch, "
                                     "pcie_gen: 5, host_gb_per_s: 224, source: s}\n",
                              "hw.yaml"))
            .nvswitch_multicast);
  CHECK_THROWS_WITH(
      Catalog::load_gpu(
          ConfigNode::parse(base + "nvlink_bridge: true\nnvswitch_multicast: true\n", "hw.yaml")),
      Contains("hw.yaml:11:21") && Contains("NVSwitch multicast needs NVLink through an NVSwitch"));
}

TEST_CASE("A model file with zero KV heads or head size is rejected, not divided by", "[catalog]") {
  const std::string base =
      "name: t/m\nnum_layers: 2\nhidden_size: 64\nnum_heads: 4\nintermediate_size: 128\n"
      "vocab_size: 100\nmax_position_embeddings: 256\n";
  CHECK_NOTHROW(Catalog::load_model(ConfigNode::parse(base, "m.yaml")));
  CHECK_THROWS_WITH(Catalog::load_model(ConfigNode::parse(base + "num_kv_heads: 0\n", "m.yaml")),
                    Contains("m.yaml:8:15: num_kv_heads: expected a positive integer"));
  CHECK_THROWS_WITH(Catalog::load_model(ConfigNode::parse(base + "head_dim: 0\n", "m.yaml")),
                    Contains("head_dim: expected a positive integer"));
}

TEST_CASE("An interleaved MoE model counts expert and dense layers apart and is checked",
          "[catalog]") {
  // Four layers, every second one MoE (layers 1 and 3): 4 experts of 32, dense layers 96 wide.
  const std::string base =
      "name: t/moe\nnum_layers: 4\nhidden_size: 16\nnum_heads: 2\nintermediate_size: 32\n"
      "vocab_size: 10\nmax_position_embeddings: 256\nnum_experts: 4\nexperts_per_token: 1\n";
  const ModelSpec m = Catalog::load_model(
      ConfigNode::parse(base + "moe_layer_interval: 2\ndense_intermediate_size: 96\n", "m.yaml"));
  CHECK(m.moe_layers() == 2);
  CHECK(m.dense_mlp_width() == 96);
  const double attention = 4.0 * 16 * 16;             // q, k, v, o of 16×16 (head_dim 8, 2 heads)
  const double moe_mlp = 4 * 3.0 * 16 * 32 + 16 * 4;  // experts + router
  const double dense_mlp = 3.0 * 16 * 96;
  CHECK(m.num_params() == Approx(4 * attention + 2 * moe_mlp + 2 * dense_mlp + 2 * 10 * 16));
  // Every layer MoE: the interval is 1 and there is no dense width.
  CHECK(Catalog::load_model(ConfigNode::parse(base, "m.yaml")).moe_layers() == 4);
  CHECK_THROWS_WITH(
      Catalog::load_model(ConfigNode::parse(base + "dense_intermediate_size: 96\n", "m.yaml")),
      Contains("m.yaml:10:") && Contains("needs moe_layer_interval > 1"));
  CHECK_THROWS_WITH(
      Catalog::load_model(ConfigNode::parse(base + "moe_layer_interval: 0\n", "m.yaml")),
      Contains("m.yaml:10:") && Contains("moe_layer_interval: expected an integer ≥ 1"));
  CHECK_THROWS_WITH(
      Catalog::load_model(ConfigNode::parse(base + "moe_layer_interval: 5\n", "m.yaml")),
      Contains("at most num_layers = 4"));
  const std::string dense =
      "name: t/d\nnum_layers: 4\nhidden_size: 16\nnum_heads: 2\nintermediate_size: 32\n"
      "vocab_size: 10\nmax_position_embeddings: 256\nmoe_layer_interval: 2\n";
  CHECK_THROWS_WITH(Catalog::load_model(ConfigNode::parse(dense, "m.yaml")),
                    Contains("m.yaml:8:") && Contains("give num_experts"));
}

TEST_CASE("A hardware file whose name differs from its file name is rejected", "[catalog]") {
  const auto dir = std::filesystem::temp_directory_path() / "servesim_catalog_name_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "hardware");
  std::ofstream(dir / "hardware" / "qagpu.yaml") << "name: other\narch: ada\n";
  CHECK_THROWS_WITH(Catalog({dir.string()}),
                    Contains("qagpu.yaml:1:7: name: 'other' differs from the file's name 'qagpu'"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Every shipped GPU names its memory, and an unknown memory type is an error at its line",
          "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  for (const auto& name : cat.gpu_names()) {
    INFO(name);
    CHECK_FALSE(cat.gpu(name, here).memory_type.empty());
  }
  CHECK(cat.gpu("a40", here).gddr());
  CHECK_FALSE(cat.gpu("h100-sxm", here).gddr());
  const auto bad = ConfigNode::parse(
      "arch: ada\nsms: 4\nboost_clock_mhz: 1\nbf16_tflops: 1\nmemory_gb: 1\n"
      "memory_bw_gb_per_s: 1\nmemory_type: ddr5\nl2_mb: 1\ntdp_w: 1\n",
      "hw.yaml");
  CHECK_THROWS_WITH(Catalog::load_gpu(bad), Contains("hw.yaml:7:14") &&
                                                Contains("unknown memory_type 'ddr5'") &&
                                                Contains("gddr6"));
}

TEST_CASE("A GPU's validation class is the measured GPUs of its arch and memory family",
          "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  // The A40 (GA102, GDDR6) is profiled; the A10G shares its die and memory; no Ada GDDR card
  // and no Blackwell card of either memory is.
  CHECK(cat.class_checked_on(cat.gpu("a40", here)) == std::vector<std::string>{"a40"});
  CHECK(cat.class_checked_on(cat.gpu("a10g", here)) == std::vector<std::string>{"a40"});
  CHECK(cat.class_checked_on(cat.gpu("l40s", here)).empty());
  CHECK(cat.class_checked_on(cat.gpu("l4", here)).empty());
  CHECK(cat.class_checked_on(cat.gpu("b200", here)).empty());
  // HBM Ampere: the A100-80GB, not the A40 of the same arch.
  CHECK(cat.class_checked_on(cat.gpu("a100-40gb", here)) == std::vector<std::string>{"a100-80gb"});
  GpuSpec unknown = cat.gpu("l40s", here);
  unknown.memory_type.clear();
  CHECK(cat.class_checked_on(unknown).empty());
}

TEST_CASE("The index knows every alias a hardware file lists, in any YAML form", "[catalog]") {
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  int aliases = 0;
  for (const auto& p : files_in(std::filesystem::path(Catalog::default_dirs().back()) / "hardware",
                                ".yaml", false, "test")) {
    const ConfigNode f = ConfigNode::load_file(p.string());
    for (const ConfigNode& a : f.at("aliases").items()) {
      INFO(p.string() << ": " << a.as_string());
      CHECK(cat.gpu(a.as_string(), here).name == p.stem().string());
      ++aliases;
    }
  }
  CHECK(aliases > 50);
  // Block-style aliases and a quoted name take the full parse, with the same result.
  const auto dir = std::filesystem::temp_directory_path() / "servesim_catalog_alias_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "hardware");
  std::ofstream(dir / "hardware" / "qbgpu.yaml") << "name: \"qbgpu\"\naliases:\n  - QB One\n";
  std::ofstream(dir / "hardware" / "qcgpu.yaml") << "name: qcgpu   # a comment\n"
                                                 << "aliases: [QC One, QC-2]  # more\n";
  Catalog mine({dir.string()});
  CHECK(mine.gpu_names() == std::vector<std::string>{"qbgpu", "qcgpu"});
  CHECK_THROWS_WITH(mine.gpu("qb one", here), Contains("qbgpu.yaml"));  // found, then loaded
  CHECK_THROWS_WITH(mine.gpu("QC-2", here), Contains("qcgpu.yaml"));
  CHECK_THROWS_WITH(mine.gpu("QD", here), Contains("unknown GPU 'QD'"));
  std::filesystem::remove_all(dir);
}
