#include <catch2/catch.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
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
