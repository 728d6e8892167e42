#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "costmodels/analytical/analytical_cost_model.hpp"
#include "tests/costmodel_command/command_test_support.hpp"
#include "tools/costmodel/costmodel_args.hpp"

using namespace servesim;
namespace fs = std::filesystem;

TEST_CASE("costmodel predict launches as simulate would: the engine's graph mode and capture size",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a = testing::predict_json("h100", 100, 8, 500);
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
  CostmodelArgs a = testing::predict_json("h100", 10, 80, 500);  // a cached prompt's last chunk
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

TEST_CASE("costmodel predict prices the replica's links and power cap as simulate does",
          "[costmodels][analytical][predict]") {
  CostmodelArgs a = testing::predict_json("a100", 0, 32, 1000);
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
  a = testing::predict_json("a100", 2048, 0, 0);
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

TEST_CASE("costmodel predict prices an MoE model's expert and attention data parallelism",
          "[costmodels][analytical][predict][moe]") {
  CostmodelArgs a = testing::predict_json("h200", 0, 64, 1000);
  a.model = "Qwen/Qwen3-235B-A22B";
  a.precision = "fp8";
  a.tp = 8;
  a.cost_model_yaml = "{kind: analytical}";
  const auto tp8 = nlohmann::json::parse(run_predict(a));
  a.attention_dp = 8;
  a.ep = 8;
  const auto dep8 = nlohmann::json::parse(run_predict(a));
  // A DEP 8 GPU attends to 8 of the 64 decodes with all 4 KV heads; a TP 8 GPU to all 64 with
  // one head, the 4 heads replicated over 8 GPUs: it reads twice the KV bytes.
  CHECK(dep8["breakdown_ns"]["attention"].get<double>() <
        0.75 * tp8["breakdown_ns"]["attention"].get<double>());
  CHECK(dep8["total_ns"].get<double>() != tp8["total_ns"].get<double>());
  // What cannot be laid out is named by its flag.
  a.ep = 3;
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--ep: expected a divisor of --tp (8), got 3"));
  a.ep = 8;
  a.model = "meta-llama/Llama-3.1-8B";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("--ep: ") && Catch::Contains("dense model"));
  a.model = "Qwen/Qwen3-235B-A22B";
  a.cost_model_yaml = "{kind: roofline}";
  CHECK_THROWS_WITH(run_predict(a), Catch::Contains("the roofline cost model does not price"));
}
