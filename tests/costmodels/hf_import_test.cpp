// costmodel import-model and `model: path/config.json`: a Hugging Face config.json becomes the
// catalog's model description, priced as the hand-written catalog file is.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/hardware/hf_config.hpp"

using namespace servesim;

namespace {

const std::string kHf = std::string(SERVESIM_SOURCE_DIR) + "/tests/data/hf/";

std::string import_error(const std::string& json) {
  const auto path = std::filesystem::temp_directory_path() / "servesim_hf_config.json";
  std::ofstream(path) << json;
  try {
    hf_config_yaml(path.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("an imported config.json is priced as the catalog's file of the same model",
          "[costmodels][moe]") {
  Catalog catalog(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", SERVESIM_SOURCE_DIR "/t.yaml");
  const GpuSpec& gpu = catalog.gpu("h200", here);
  const AnalyticalCostModel cm{AnalyticalCostModel::Options{}};
  for (const char* name : {"Qwen/Qwen3-235B-A22B", "deepseek-ai/DeepSeek-V3", "openai/gpt-oss-120b",
                           "Qwen/Qwen3.5-397B-A17B"}) {
    INFO(name);
    const std::string folder = std::string(name).substr(std::string(name).find('/') + 1);
    const ModelSpec& imported = catalog.model("tests/data/hf/" + folder + "/config.json", here);
    const ModelSpec& catalogued = catalog.model(name, here);
    CHECK(imported.name == catalogued.name);
    CHECK(imported.num_params() == catalogued.num_params());
    CHECK(imported.weight_bytes(Precision::kFp8) == catalogued.weight_bytes(Precision::kFp8));
    CHECK(imported.kv_bytes_per_token_per_layer(2) == catalogued.kv_bytes_per_token_per_layer(2));
    CHECK(imported.sliding_layers() == catalogued.sliding_layers());
    CHECK(imported.linear_layers() == catalogued.linear_layers());
    CHECK(imported.moe_layers() == catalogued.moe_layers());
    CHECK(imported.fp8_skips_attention == catalogued.fp8_skips_attention);
    BatchShape b;
    b.prefills.push_back({2048, 0});
    b.decode_contexts = {1000, 3000, 5000};
    for (const auto& [dp, ep] : {std::pair{1, 1}, {8, 8}}) {
      ReplicaSpec a;
      a.gpu = &gpu;
      a.model = &imported;
      a.tp = 8;
      a.attention_dp = dp;
      a.moe_ep = ep;
      a.weights = Precision::kFp8;
      ReplicaSpec c = a;
      c.model = &catalogued;
      CHECK(cm.step(b, a).total_ns == cm.step(b, c).total_ns);
    }
  }
  // The YAML names its source file.
  CHECK_THAT(hf_config_yaml(kHf + "DeepSeek-V3/config.json"),
             Catch::Contains("DeepseekV3ForCausalLM), imported by costmodel import-model"));
}

TEST_CASE("a config.json the physics cannot price is named with its field", "[costmodels][moe]") {
  using Catch::Matchers::Contains;
  CHECK_THAT(import_error(R"({"architectures": ["MambaForCausalLM"], "hidden_size": 8})"),
             Contains("architectures: unknown architecture 'MambaForCausalLM'"));
  CHECK_THAT(import_error(R"({"hidden_size": 8})"), Contains("architectures: missing"));
  CHECK_THAT(import_error(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2,
                              "hidden_size": 64, "num_attention_heads": 4})"),
             Contains("servesim_hf_config.json: intermediate_size: missing"));
  CHECK_THAT(import_error(R"({"architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 2,
                              "hidden_size": 64, "num_attention_heads": 4,
                              "moe_intermediate_size": 8, "vocab_size": 10,
                              "max_position_embeddings": 10, "num_experts": 4,
                              "num_experts_per_tok": 2, "mlp_only_layers": [0]})"),
             Contains("mlp_only_layers: dense layers at chosen positions are not priced"));
  CHECK_THAT(import_error("{not json"), Contains("not JSON"));
}
