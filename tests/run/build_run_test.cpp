#include <catch2/catch.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/hardware/memory_planner.hpp"

using namespace servesim;

// build_run (run/run_builder) builds every run a Simulation makes.
TEST_CASE("build_run reserves activations for the token budget the scheduler really uses",
          "[tools][memory]") {
  auto run_with = [](const std::string& scheduler) {
    const std::string yaml =
        "name: t\nmodel: meta-llama/Llama-2-7b-hf\nreplicas: [{gpu: h100}]\n"
        "cost_model: {kind: roofline}\nscheduler: " +
        scheduler +
        "\nworkload:\n  arrival: {kind: poisson, qps: 1}\n  lengths: {kind: fixed, "
        "prompt_tokens: 100, output_tokens: 10}\n  num_requests: 3\n";
    return build_run(RunConfig::parse(ConfigNode::parse(yaml, "t.yaml")));
  };
  Catalog cat(Catalog::default_dirs());
  const ConfigNode here = ConfigNode::parse("x: 1", "test");
  ReplicaSpec r;
  r.gpu = &cat.gpu("h100", here);
  r.model = &cat.model("meta-llama/Llama-2-7b-hf", here);
  auto blocks = [&](std::int32_t budget) {
    return plan_kv_memory(r, 0.9, 16, budget, 128).num_blocks;
  };
  // sarathi without a chunk size runs 512-token steps; vllm without a budget takes whole
  // prompts (max_model_len 4096 here, at least 2048); an explicit budget is used as given.
  CHECK(run_with("{kind: sarathi}").fleet.at(0)->kv.total_blocks() == blocks(512));
  CHECK(run_with("{kind: vllm}").fleet.at(0)->kv.total_blocks() == blocks(4096));
  CHECK(run_with("{kind: sarathi, chunk_size: 1024}").fleet.at(0)->kv.total_blocks() ==
        blocks(1024));
  CHECK(blocks(512) > blocks(4096));
}

TEST_CASE("piecewise CUDA graphs stop at vLLM V1's largest capture size unless the config says",
          "[tools][cuda-graphs]") {
  auto spec_with = [](const std::string& replica, const std::string& scheduler) {
    const std::string yaml = "name: t\nmodel: meta-llama/Llama-2-7b-hf\nreplicas: [{gpu: h100" +
                             replica + "}]\ncost_model: {kind: roofline}\nscheduler: " + scheduler +
                             "\nworkload:\n  arrival: {kind: poisson, qps: 1}\n  lengths: {kind: "
                             "fixed, prompt_tokens: 100, output_tokens: 10}\n  num_requests: 3\n";
    return build_run(RunConfig::parse(ConfigNode::parse(yaml, "t.yaml"))).fleet.at(0)->spec;
  };
  CHECK(spec_with(", cuda_graph_mode: piecewise", "{kind: sarathi}").cuda_graph_max_tokens == 256);
  CHECK(spec_with(", cuda_graph_mode: piecewise", "{kind: sarathi, max_num_seqs: 64}")
            .cuda_graph_max_tokens == 128);
  CHECK(spec_with(", cuda_graph_mode: piecewise, cuda_graph_max_tokens: 1024", "{kind: sarathi}")
            .cuda_graph_max_tokens == 1024);
  CHECK(spec_with("", "{kind: sarathi}").cuda_graph_max_tokens == 0);  // decode_only: no limit
}

TEST_CASE("an MoE replica laid out by expert or attention data parallelism is checked",
          "[tools][moe]") {
  auto build = [](const std::string& model, const std::string& replica,
                  const std::string& cost = "analytical") {
    const std::string yaml = "name: t\nmodel: " + model + "\nreplicas:\n  - " + replica +
                             "\ncost_model: {kind: " + cost +
                             "}\nscheduler: {kind: sarathi}\nworkload:\n  arrival: {kind: "
                             "poisson, qps: 1}\n  lengths: {kind: fixed, prompt_tokens: 100, "
                             "output_tokens: 10}\n  num_requests: 3\n";
    return build_run(RunConfig::parse(ConfigNode::parse(yaml, "t.yaml")));
  };
  auto error = [&](const std::string& model, const std::string& replica,
                   const std::string& cost = "analytical") {
    try {
      build(model, replica, cost);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string qwen = "Qwen/Qwen3-235B-A22B";
  // DEP 8 on H200: eight groups, each its own cache.
  const auto run = build(qwen, "{gpu: h200, tp: 8, precision: fp8, attention_dp: 8, ep: 8}");
  const ReplicaSpec& spec = run.fleet.at(0)->spec;
  CHECK(spec.attention_dp == 8);
  CHECK(spec.moe_ep == 8);
  CHECK(spec.attention_tp() == 1);
  CHECK(run.fleet.at(0)->kv.total_blocks() % 8 == 0);
  using Catch::Matchers::Contains;
  CHECK_THAT(error(qwen, "{gpu: h200, tp: 8, precision: fp8, ep: 3}"),
             Contains("t.yaml:4:44: replicas[0].ep: expected a divisor of tp (8), got 3"));
  CHECK_THAT(error("meta-llama/Llama-3.1-8B", "{gpu: h200, tp: 2, attention_dp: 2}"),
             Contains("is a dense model"));
  CHECK_THAT(error(qwen, "{gpu: h200, tp: 8, precision: fp8, ep: 8}", "roofline"),
             Contains("the roofline cost model does not price expert parallelism"));
}
