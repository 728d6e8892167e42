#include "schedulers/registry.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "costmodels/registry.hpp"
#include "schedulers/replica/scheduler_base.hpp"
#include "sim/config/input_error.hpp"
#include "tests/schedulers/scheduler_harness.hpp"

using namespace servesim;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using servesim::test::SchedulerHarness;
using Trace = std::vector<std::string>;

namespace {

std::unique_ptr<ReplicaScheduler> scheduler_from(const std::string& yaml) {
  const ConfigNode node = ConfigNode::parse(yaml, "t.yaml");
  return make_replica_scheduler(node, parse_scheduler_options(node));
}

// The message of the InputError that building the scheduler of `yaml` throws.
std::string scheduler_error(const std::string& yaml) {
  try {
    scheduler_from(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for:\n" << yaml);
  return "";
}

std::string router_error(const std::string& yaml) {
  try {
    make_router(ConfigNode::parse(yaml, "t.yaml"), 1);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for:\n" << yaml);
  return "";
}

}  // namespace

TEST_CASE("The registries list their kinds sorted, each once", "[schedulers][registry]") {
  // A new kind is one entry: the lists follow the tables, so no test names them.
  for (const auto& kinds : {replica_scheduler_kinds(), router_kinds(), decode_router_kinds()}) {
    CHECK(kinds.size() >= 4);
    CHECK(std::is_sorted(kinds.begin(), kinds.end()));
    CHECK(std::adjacent_find(kinds.begin(), kinds.end()) == kinds.end());
  }
  // The kinds the example configs and the docs name.
  for (const char* kind : {"round_robin", "least_outstanding", "power_aware", "global_queue"}) {
    CHECK(find_router(kind) != nullptr);
  }
  for (const char* kind : {"vllm", "sarathi", "orca", "edf"}) {
    CHECK(find_replica_scheduler(kind) != nullptr);
  }
}

TEST_CASE("Every scheduler kind builds from a minimal section and serves requests to the end",
          "[schedulers][registry]") {
  for (const std::string& kind : replica_scheduler_kinds()) {
    INFO("kind " << kind);
    auto scheduler = scheduler_from(fmt::format("kind: {}\n", kind));
    REQUIRE(scheduler != nullptr);
    CHECK(scheduler->name() == kind);
    // A cache of 40 blocks (640 tokens) forces queueing and, for vllm and sarathi, preemption.
    SchedulerHarness h(std::move(scheduler), KvCache(40, 16, 0.01));
    for (int i = 0; i < 24; ++i) h.add(20 + 37 * (i % 7), 1 + 13 * (i % 5));
    REQUIRE(h.run_to_completion(10000));
    for (const Request& r : h.requests()) CHECK(r.generated == r.spec.output_tokens);
    CHECK(h.kv().used_blocks() == 0);
    CHECK(h.scheduler().num_outstanding() == 0);
  }
}

TEST_CASE("Every scheduler kind accepts every common key", "[schedulers][registry]") {
  for (const std::string& kind : replica_scheduler_kinds()) {
    INFO("kind " << kind);
    const std::string yaml = fmt::format(
        "kind: {}\nmax_num_seqs: 4\nmax_num_batched_tokens: 4096\nblock_size: 32\n"
        "gpu_memory_utilization: 0.8\nnum_gpu_blocks: 100\nwatermark: 0.02\nmax_model_len: 4096\n",
        kind);
    const ConfigNode node = ConfigNode::parse(yaml, "t.yaml");
    const SchedulerOptions o = parse_scheduler_options(node);
    CHECK(o.max_num_seqs == 4);
    CHECK(o.max_num_batched_tokens == 4096);
    CHECK(o.block_size == 32);
    CHECK(o.gpu_memory_utilization == 0.8);
    CHECK(o.num_gpu_blocks == 100);
    CHECK(o.watermark == 0.02);
    CHECK(o.max_model_len == 4096);
    CHECK(make_replica_scheduler(node, o) != nullptr);
  }
}

namespace {

// The smallest section of a router kind: its kind, and for length_split two pools of the replica
// groups 0 and 1.
ConfigNode minimal_router(std::string_view kind) {
  return ConfigNode::parse(
      fmt::format("kind: {}\n{}", kind,
                  kind == "length_split"
                      ? "pools: [{groups: [0], max_prompt_tokens: 1024}, {groups: [1]}]\n"
                      : ""),
      "t.yaml");
}

}  // namespace

TEST_CASE("Every router kind builds from a minimal section and returns eligible replicas",
          "[schedulers][registry][routers]") {
  Fleet fleet;
  for (int i = 0; i < 3; ++i) {
    fleet.push_back(std::make_unique<Replica>(i, ReplicaSpec{}, scheduler_from("kind: vllm\n"),
                                              KvCache(100, 16, 0.0), 4096));
  }
  fleet[2]->group = 1;  // a second replica group, for routers that split the fleet by group
  // The engine attaches every router to the fleet and its cost model before the run.
  const auto cost = make_cost_model(ConfigNode::parse("kind: fixed", "t.yaml"));
  for (const std::string& kind : router_kinds()) {
    INFO("kind " << kind);
    auto router = make_router(minimal_router(kind), 42);
    REQUIRE(router != nullptr);
    CHECK(router->name() == kind);
    router->attach(fleet, *cost);
    if (router->queue() != nullptr) continue;  // it holds requests (global_queue_test.cpp)
    Request r;
    for (int i = 0; i < 50; ++i) {
      const ReplicaId id = router->route(r, fleet, {0, 2}, 0);
      CHECK((id == 0 || id == 2));
      CHECK(router->route(r, fleet, {1}, 0) == 1);
    }
  }
}

TEST_CASE("An unknown kind names its position and lists the known kinds",
          "[schedulers][registry]") {
  CHECK_THAT(
      scheduler_error("kind: sarathy\n"),
      StartsWith("t.yaml:1:7: ") &&
          EndsWith(fmt::format("unknown scheduler 'sarathy' (did you mean 'sarathi'? known: {})",
                               fmt::join(replica_scheduler_kinds(), ", "))));
  CHECK_THAT(router_error("kind: round_robbin\n"),
             StartsWith("t.yaml:1:7: ") &&
                 EndsWith(fmt::format(
                     "unknown router 'round_robbin' (did you mean 'round_robin'? known: {})",
                     fmt::join(router_kinds(), ", "))));
  CHECK_THAT(scheduler_error("max_num_seqs: 4\n"), Contains("kind"));
}

TEST_CASE("An unknown key in a scheduler or router section is an error", "[schedulers][registry]") {
  for (const std::string& kind : replica_scheduler_kinds()) {
    INFO("kind " << kind);
    const std::string msg = scheduler_error(fmt::format("kind: {}\nmax_num_seq: 4\n", kind));
    CHECK_THAT(msg, Contains("t.yaml:2:1") && Contains("unknown key 'max_num_seq'") &&
                        Contains("max_num_seqs"));
  }
  for (const std::string& kind : router_kinds()) {
    INFO("kind " << kind);
    CHECK_THAT(router_error(fmt::format("kind: {}\nseed: 3\n", kind)),
               Contains("t.yaml:2:1") && Contains("unknown key 'seed'"));
  }
  CHECK_THAT(scheduler_error("kind: sarathi\nchunk_size: 256\nmax_num_batched_tokens: 512\n"),
             Contains("t.yaml:2:") && Contains("not both"));
  CHECK_THAT(scheduler_error("kind: vllm\nmax_num_seqs: 0\n"), Contains("t.yaml:2:"));
  CHECK_THAT(scheduler_error("kind: vllm\nwatermark: 1.5\n"), Contains("t.yaml:2:"));
  CHECK_THAT(scheduler_error("vllm\n"), Contains("t.yaml:1:1"));
}

TEST_CASE("chunk_size is Sarathi's name for the token budget", "[schedulers][registry]") {
  const ConfigNode node = ConfigNode::parse("kind: sarathi\nchunk_size: 256\n", "t.yaml");
  CHECK(parse_scheduler_options(node).max_num_batched_tokens == 256);
}

TEST_CASE("The KV watermark defaults to none for vLLM V1 chunked prefill and 1% otherwise",
          "[schedulers][registry]") {
  auto watermark = [](const std::string& yaml) {
    return parse_scheduler_options(ConfigNode::parse(yaml, "t.yaml")).watermark;
  };
  CHECK(watermark("kind: sarathi\n") == 0);
  CHECK(watermark("kind: vllm\nenable_chunked_prefill: true\n") == 0);
  CHECK(watermark("kind: vllm\n") == 0.01);
  CHECK(watermark("kind: orca\n") == 0.01);
  CHECK(watermark("kind: sarathi\nwatermark: 0.05\n") == 0.05);
}

TEST_CASE("vllm with enable_chunked_prefill is the sarathi scheduler", "[schedulers][registry]") {
  auto plain = scheduler_from("kind: vllm\n");
  CHECK(plain->name() == "vllm");
  auto chunked =
      scheduler_from("kind: vllm\nenable_chunked_prefill: true\nmax_num_batched_tokens: 512\n");
  CHECK(chunked->name() == "sarathi");
  SchedulerHarness h(std::move(chunked), KvCache(1000, 16, 0.0));
  h.add(1000, 3);
  h.add(300, 3);
  CHECK(h.trace(10) == Trace{"A:512", "A:488 B:24", "A:1 B:276", "A:1 B:1", "B:1"});
  SchedulerHarness v(std::move(plain), KvCache(1000, 16, 0.0));
  v.add(1000, 3);
  v.add(300, 3);
  CHECK(v.trace(10) == Trace{"A:1000 B:300", "A:1 B:1", "A:1 B:1"});
}

TEST_CASE("async_scheduling is refused where there is no chunked prefill",
          "[schedulers][registry]") {
  for (const char* kind : {"orca", "vllm"}) {
    INFO(kind);
    const ConfigNode n =
        ConfigNode::parse(std::string("{kind: ") + kind + ", async_scheduling: true}", "t");
    CHECK_THROWS_WITH(make_replica_scheduler(n, parse_scheduler_options(n)),
                      Catch::Contains("chunked prefill"));
  }
  for (const char* text : {"{kind: sarathi, async_scheduling: true}",
                           "{kind: vllm, enable_chunked_prefill: true, async_scheduling: true}"}) {
    const ConfigNode n = ConfigNode::parse(text, "t");
    CHECK_NOTHROW(make_replica_scheduler(n, parse_scheduler_options(n)));
  }
}

TEST_CASE("Every scheduler entry exposes exactly the optional roles it declares",
          "[schedulers][registry][contract]") {
  const auto kinds = replica_scheduler_kinds();
  CHECK(std::is_sorted(kinds.begin(), kinds.end()));
  for (const SchedulerEntry& entry : replica_scheduler_entries()) {
    for (const bool chunked : {false, true}) {
      INFO("kind " << entry.kind << ", enable_chunked_prefill " << chunked);
      const ConfigNode node = ConfigNode::parse(
          fmt::format("kind: {}\nenable_chunked_prefill: {}\n", entry.kind, chunked), "t.yaml");
      const SchedulerOptions o = parse_scheduler_options(node);
      const SchedulerCapabilities caps = scheduler_capabilities(node, o);
      CHECK(chunked_prefill(node, o) == caps.chunked_prefill);
      CHECK(o.watermark == (caps.chunked_prefill ? 0.0 : 0.01));
      auto s = make_replica_scheduler(node, o);
      CHECK((dynamic_cast<PrefillRole*>(s.get()) != nullptr) == caps.prefill_role);
      CHECK((dynamic_cast<DecodeRole*>(s.get()) != nullptr) == caps.decode_role);
      CHECK((dynamic_cast<FleetQueuePuller*>(s.get()) != nullptr) == caps.pulls_fleet_queue);
      // The checks made before simulated time 0 follow the declared capabilities.
      if (caps.prefill_role && caps.decode_role) {
        CHECK_NOTHROW(check_disaggregation_roles(node, o));
      } else {
        CHECK_THROWS_WITH(check_disaggregation_roles(node, o),
                          StartsWith("t.yaml:1:7: ") && Contains("cannot hand a prefill off"));
      }
      for (const RouterEntry& router : router_entries()) {
        if (!router.capabilities.routes_arrivals) continue;
        INFO("router " << router.kind);
        const ConfigNode r = ConfigNode::parse(fmt::format("kind: {}\n", router.kind), "r.yaml");
        if (router.capabilities.fleet_queue && !caps.pulls_fleet_queue) {
          CHECK_THROWS_WITH(check_fleet_queue(r, node, o),
                            StartsWith("r.yaml:1:7: ") && Contains("replicas pull from"));
        } else {
          CHECK_NOTHROW(check_fleet_queue(r, node, o));
        }
      }
      // A declared feature is accepted, a missing one refused at its key.
      const ConfigNode with = ConfigNode::parse(
          fmt::format("kind: {}\nenable_chunked_prefill: {}\nasync_scheduling: true\n"
                      "enable_prefix_caching: true\n",
                      entry.kind, chunked),
          "t.yaml");
      SchedulerOptions wo = parse_scheduler_options(with);
      wo.enable_prefix_caching = false;
      if (caps.chunked_prefill) {
        CHECK_NOTHROW(make_replica_scheduler(with, wo));
      } else {
        CHECK_THROWS_WITH(make_replica_scheduler(with, wo), StartsWith("t.yaml:3:"));
      }
      wo = parse_scheduler_options(with);
      wo.async_scheduling = false;
      if (caps.prefix_caching) {
        CHECK_NOTHROW(make_replica_scheduler(with, wo));
      } else {
        CHECK_THROWS_WITH(make_replica_scheduler(with, wo), StartsWith("t.yaml:4:"));
      }
    }
  }
}

TEST_CASE("Every router entry serves the roles it declares", "[schedulers][registry][contract]") {
  Fleet fleet;
  for (int i = 0; i < 3; ++i) {
    fleet.push_back(std::make_unique<Replica>(i, ReplicaSpec{}, scheduler_from("kind: vllm\n"),
                                              KvCache(100, 16, 0.0), 4096));
  }
  const auto cost = make_cost_model(ConfigNode::parse("kind: fixed", "t.yaml"));
  const auto decode_kinds = decode_router_kinds();
  CHECK(std::is_sorted(decode_kinds.begin(), decode_kinds.end()));
  for (const RouterEntry& entry : router_entries()) {
    INFO("kind " << entry.kind);
    const RouterCapabilities& caps = entry.capabilities;
    CHECK((caps.routes_arrivals || caps.routes_decodes));
    CHECK(find_router(entry.kind) == &entry);
    const ConfigNode node = minimal_router(entry.kind);
    if (caps.routes_arrivals) {
      CHECK((make_router(node, 1)->queue() != nullptr) == caps.fleet_queue);
    } else {
      CHECK_THROWS_WITH(make_router(node, 1), Contains("unknown router"));
    }
    if (!caps.routes_decodes) {
      CHECK_THROWS_WITH(make_decode_router(node, 1), Contains("unknown decode router"));
      continue;
    }
    CHECK_FALSE(caps.fleet_queue);  // a decode router never holds a request
    auto router = make_decode_router(node, 42);
    CHECK(router->name() == entry.kind);
    router->attach(fleet, *cost);
    Request r;
    for (int i = 0; i < 20; ++i) {
      const ReplicaId id = router->route(r, fleet, {0, 2}, 0);
      CHECK((id == 0 || id == 2));
    }
  }
}

TEST_CASE("Batch waiting is orca's, with a step count and a ratio of the budget",
          "[schedulers][registry]") {
  const auto orca = scheduler_from(
      "kind: orca\nmax_num_batched_tokens: 100\nbatch_wait_timeout_iters: 3\n"
      "batch_wait_max_tokens_ratio: 0.5\n");
  const auto* base = dynamic_cast<const SchedulerBase*>(orca.get());
  REQUIRE(base != nullptr);
  CHECK(base->options().batch_wait_timeout_iters == 3);
  CHECK(base->options().batch_wait_max_tokens_ratio == 0.5);
  CHECK_THAT(scheduler_error("kind: sarathi\nbatch_wait_timeout_iters: 3\n"),
             Contains("t.yaml:2:1") && Contains("unknown key 'batch_wait_timeout_iters'"));
  CHECK_THAT(scheduler_error("kind: orca\nbatch_wait_timeout_iters: -1\n"),
             Contains("t.yaml:2:") && Contains("step count"));
  CHECK_THAT(scheduler_error("kind: orca\nbatch_wait_max_tokens_ratio: 1.5\n"),
             Contains("t.yaml:2:"));
  // Its look-ahead does not pass over requests waiting for an adapter slot: no LoRA with it.
  const auto waiting = scheduler_from("kind: orca\nbatch_wait_timeout_iters: 3\n");
  auto plain = scheduler_from("kind: orca\n");
  CHECK_FALSE(waiting->attach_lora(nullptr));
  CHECK(plain->attach_lora(nullptr));
}
