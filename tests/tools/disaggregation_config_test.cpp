// Disaggregated fleets as a user writes them: the config's rules, a whole run's conservation,
// and that a fleet of mixed replicas runs exactly as before (no P/D code on its path).
#include <string>

#include <catch2/catch.hpp>

#include "run/run_config_loader.hpp"
#include "run/run_executor.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"

namespace servesim {
namespace {

std::string config(const std::string& replicas, const std::string& extra = "",
                   const std::string& scheduler = "{kind: sarathi, chunk_size: 2048}") {
  return "name: t\nseed: 3\nmodel: meta-llama/Llama-3.1-8B\nreplicas: " + replicas +
         "\nscheduler: " + scheduler + "\ncost_model: {kind: analytical}\n" + extra +
         "workload:\n  arrival: {kind: poisson, qps: 4}\n  lengths: {kind: fixed, "
         "prompt_tokens: 1000, output_tokens: 10}\n  num_requests: 50\n";
}

nlohmann::json run(const std::string& yaml) {
  Simulation sim(RunConfig::parse(ConfigNode::parse(yaml, "t.yaml")));
  RunOptions options;
  options.write_outputs = false;
  return execute_run(sim, options);
}

std::string error_of(const std::string& yaml) {
  try {
    run(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for:\n" << yaml);
  return "";
}

const std::string kPd = "[{gpu: h100-sxm, role: prefill}, {gpu: h100-sxm, count: 2, role: decode}]";

}  // namespace

TEST_CASE("A disaggregated run moves every request's KV once and loses none", "[pd]") {
  const auto s = run(config(kPd));
  CHECK(s["requests"]["finished"] == 50);
  CHECK(s["requests"]["unfinished"] == 0);
  const auto& d = s["disaggregation"];
  CHECK(d["transfers"] == 50);
  CHECK(d["kv_tokens"] == 50 * 1000);
  // Llama-3.1-8B: 32 layers × 8 KV heads × 128 dims × K and V × 2 bytes = 131,072 B per token.
  CHECK(d["kv_bytes"].get<double>() == 50.0 * 1000 * 131072);
  CHECK(d["roles"]["prefill"]["replicas"] == 1);
  CHECK(d["roles"]["decode"]["replicas"] == 2);
  CHECK(s["replicas"][1]["role"] == "decode");
  // One node: the KV moves over NVLink, from GPU 0 to GPUs 1 and 2, and the links say so.
  double out_of_gpu0 = 0;
  for (const auto& l : d["links"]) {
    if (l["link"] == "gpu0>nvswitch0") out_of_gpu0 = l["bytes"].get<double>();
  }
  CHECK(out_of_gpu0 == Approx(50.0 * 1000 * 131072));
}

TEST_CASE("A fleet of mixed replicas runs exactly as one without roles", "[pd]") {
  const std::string plain = "[{gpu: h100-sxm, count: 2}]";
  const std::string mixed = "[{gpu: h100-sxm, count: 2, role: mixed}]";
  auto a = run(config(plain));
  auto b = run(config(mixed));
  CHECK(a["config"]["replicas"][0].size() + 1 == b["config"]["replicas"][0].size());
  a.erase("config");  // the config as written, `role: mixed` in one
  b.erase("config");
  CHECK(a.dump() == b.dump());
  CHECK_FALSE(a.contains("disaggregation"));
  CHECK_FALSE(a["replicas"][0].contains("role"));
}

TEST_CASE("Disaggregation config errors name the key and what was expected", "[pd][errors]") {
  using Catch::Contains;
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill}]")),
             Contains("t.yaml:4:") && Contains("a prefill group needs a decode group beside it"));
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill}, {gpu: h100-sxm, role: decode}, "
                             "{gpu: h100-sxm}]")),
             Contains("a mixed group cannot join a disaggregated fleet"));
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: both}]")),
             Contains("unknown role 'both' (known: mixed, prefill, decode)"));
  CHECK_THAT(error_of(config("[{gpu: h100-sxm}]", "decode_router: {kind: most_free_kv}\n")),
             Contains("t.yaml:7:") && Contains("only a disaggregated fleet has a decode router"));
  CHECK_THAT(error_of(config(kPd, "decode_router: {kind: power_aware}\n")),
             Contains("unknown decode router 'power_aware'") &&
                 Contains("known: least_outstanding, most_free_kv, random, round_robin"));
  CHECK_THAT(error_of(config(kPd, "cluster: {nic_gbps: 400}\n")),
             Contains("t.yaml:7:") && Contains("nic_gbps"));
  CHECK_THAT(error_of(config(kPd, "cluster: {nvlink_efficiency: 1.5}\n")),
             Contains("nvlink_efficiency"));
  // 2048 × 4 + 2049 × 4 GPUs: one replica past the limit, refused before anything is built.
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill, count: 2048, tp: 4}, "
                             "{gpu: h100-sxm, role: decode, count: 2049, tp: 4}]")),
             Contains("t.yaml:4:64: replicas[1]:") &&
                 Contains("makes the disaggregated fleet 16388 GPUs, more "
                          "than the 16384 its link graph may have"));
  CHECK_THAT(error_of(config(kPd, "", "{kind: orca}")),
             Contains("orca reserves each request's whole KV at admission and cannot hand a "
                      "prefill off"));
}

TEST_CASE("A replica group's scheduler keys refine the fleet's for its replicas", "[pd]") {
  using Catch::Contains;
  // The prefill pool batches up to 4096 tokens of 3 prompts, the decode pool holds 5 requests;
  // the fleet's chunk size and kind stand wherever a group does not set its own.
  const std::string pools =
      "[{gpu: h100-sxm, role: prefill, scheduler: {max_num_seqs: 3, chunk_size: 4096}},\n"
      "  {gpu: h100-sxm, count: 2, role: decode, scheduler: {max_num_seqs: 5}}]";
  Simulation sim(RunConfig::parse(ConfigNode::parse(config(pools), "t.yaml")));
  const Fleet& fleet = sim.fleet();
  REQUIRE(fleet.size() == 3);
  CHECK(fleet[0]->scheduler->seat_limit() == 3);
  CHECK(fleet[0]->scheduler->token_budget() == 4096);
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(fleet[i]->scheduler->seat_limit() == 5);
    CHECK(fleet[i]->scheduler->token_budget() == 2048);
  }
  const auto s = run(config(pools));
  CHECK(s["requests"]["finished"] == 50);
  // The fleet's section is left as written: a group without keys of its own takes it whole.
  Simulation plain(RunConfig::parse(ConfigNode::parse(config(kPd), "t.yaml")));
  CHECK(plain.fleet()[0]->scheduler->token_budget() == 2048);
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill, scheduler: {kind: vllm}}, "
                             "{gpu: h100-sxm, role: decode}]")),
             Contains("t.yaml:4:61:") && Contains("keeps its kind"));
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill, scheduler: 4}, "
                             "{gpu: h100-sxm, role: decode}]")),
             Contains("t.yaml:4:") && Contains("a replica group's scheduler keys"));
  // A group's unknown key is named with the group's path, at its place in the file.
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill}, "
                             "{gpu: h100-sxm, role: decode, scheduler: {max_num_seq: 2}}]")),
             Contains("t.yaml:4:") &&
                 Contains("unknown key 'max_num_seq' in replicas[1].scheduler") &&
                 Contains("did you mean 'max_num_seqs'"));
  // A bad value of a group's key is named where the group wrote it.
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, role: prefill}, "
                             "{gpu: h100-sxm, role: decode, scheduler: {max_num_seqs: -2}}]")),
             Contains("t.yaml:4:") && Contains("replicas[1].scheduler.max_num_seqs"));
}

TEST_CASE("Pipeline stages hand off over the cluster's links, over NICs between nodes", "[pp]") {
  using Catch::Contains;
  const std::string big = "[{gpu: h100-sxm, model: meta-llama/Llama-2-70b-hf, tp: 8, pp: 2}]";
  // One request: its TTFT is one prefill step through both stages, with no queue to reorder.
  const auto lone_ttft_of = [&](const std::string& fleet, const std::string& cluster) {
    std::string yaml = config(fleet, cluster);
    yaml.replace(yaml.find("num_requests: 50"), 16, "num_requests: 1");
    return run(yaml)["latency_ms"]["ttft"]["mean"].get<double>();
  };
  const auto lone_ttft = [&](const std::string& cluster) { return lone_ttft_of(big, cluster); };
  const double ttft = lone_ttft("");
  // A slower fabric slows the prefill's hand-off; one 16-GPU node (an NVLink domain) speeds it.
  // 1000 tokens' hidden states and residual are 32.8 MB, 4.1 MB a rank: at 12.5 instead of 50 GB/s
  // the NIC copy takes 0.246 ms longer.
  const double slow = lone_ttft("cluster: {nic_gb_per_s: 12.5}\n");
  const double one_node = lone_ttft("cluster: {gpus_per_node: 16}\n");
  CHECK(slow - ttft == Approx(2.0 * 1000 * 8192 * 2 / 8 * (1 / 12.5 - 1 / 50.0) * 1e-6));
  CHECK(one_node < ttft);
  // Inside a node the section's copy constants price the hand-offs: a slower copy, a later
  // first token.
  const double in_node = lone_ttft_of("[{gpu: h100-sxm, tp: 4, pp: 2}]", "");
  CHECK(lone_ttft_of("[{gpu: h100-sxm, tp: 4, pp: 2}]", "cluster: {nvlink_efficiency: 0.3}\n") >
        in_node);
  // Nothing would read a cluster section on a fleet of one-GPU replicas that moves no KV.
  CHECK_THAT(error_of(config("[{gpu: h100-sxm}]", "cluster: {gpus_per_node: 8}\n")),
             Contains("t.yaml:7:") && Contains("nothing in this fleet reads the cluster section"));
  // Tensor parallelism stays inside a node; no stage straddles two.
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, model: meta-llama/Llama-2-70b-hf, tp: 16}]")),
             Contains("t.yaml:4:") && Contains("tp 16 spans more than one node of 8 GPUs"));
  CHECK_THAT(error_of(config("[{gpu: h100-sxm, model: meta-llama/Llama-2-70b-hf, tp: 4, pp: 4}]",
                             "cluster: {gpus_per_node: 6}\n")),
             Contains("tp 4 × pp 4 takes several nodes of 6 GPUs") &&
                 Contains("expected tp to divide cluster.gpus_per_node"));
}

TEST_CASE("The decode router's local_first keeps KV on the node when it can", "[pd]") {
  // Two nodes of 2 GPUs: prefill + decode on node 0, a second decode replica alone on node 1.
  const std::string fleet =
      "[{gpu: h100-sxm, role: prefill}, {gpu: h100-sxm, count: 2, role: decode}]";
  const auto s = run(config(fleet,
                            "cluster: {gpus_per_node: 2}\ndecode_router: {kind: "
                            "most_free_kv, local_first: true}\n"));
  double nic = 0;
  for (const auto& l : s["disaggregation"]["links"]) {
    if (l["link"].get<std::string>().find("nic") != std::string::npos)
      nic += l["bytes"].get<double>();
  }
  CHECK(nic == 0);
  // Without it the emptier replica on node 1 takes some, over the NICs.
  const auto spread = run(config(fleet, "cluster: {gpus_per_node: 2}\n"));
  double spread_nic = 0;
  for (const auto& l : spread["disaggregation"]["links"]) {
    if (l["link"] == "gpu0>nic") spread_nic += l["bytes"].get<double>();
  }
  CHECK(spread_nic > 0);
}

}  // namespace servesim
