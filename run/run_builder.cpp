#include "run/run_builder.hpp"

#include <cmath>

#include <fmt/format.h>

#include "costmodels/analytical/engine_profile.hpp"
#include "costmodels/registry.hpp"
#include "run/lora_setup.hpp"
#include "schedulers/registry.hpp"
#include "sim/config/input_error.hpp"
#include "sim/hardware/memory_planner.hpp"
#include "sim/util/splitmix.hpp"
#include "workloads/registry.hpp"

namespace servesim {

SimTime provisioning_delay(const AutoscalingConfig& config, const ReplicaSpec& spec) {
  if (config.provisioning_delay) return *config.provisioning_delay;
  const double bytes = spec.model->weight_bytes(spec.weights);
  return config.engine_start + seconds_to_sim(bytes / (config.storage_gb_per_s * 1e9));
}

namespace {
// The CPU tier of one replica of `spec` (an empty one, copied for each replica of its group):
// a block is the memory planner's per-GPU block bytes (with a drafter's KV, which shares the
// block) on each of the replica's tp × pp GPUs, and each GPU moves its shard over its own host
// link.
std::shared_ptr<const KvOffload> make_kv_offload(const KvOffloadConfig& c, const ReplicaSpec& spec,
                                                 const SchedulerOptions& options,
                                                 const ReplicaScheduler& scheduler,
                                                 const Speculation* speculation) {
  double gpu_block_bytes = plan_kv_memory(spec, options.gpu_memory_utilization, options.block_size,
                                          scheduler.token_budget(), options.max_num_seqs)
                               .block_bytes;
  if (speculation != nullptr) {
    gpu_block_bytes += speculation
                           ->memory(spec, options.gpu_memory_utilization, options.block_size,
                                    scheduler.token_budget(), options.max_num_seqs)
                           .block_bytes;
  }
  const double link_gb_per_s = c.link_gb_per_s.value_or(spec.gpu->pcie_gb_per_s);
  if (!(link_gb_per_s > 0)) {
    c.node.fail(
        fmt::format("GPU '{}' has no pcie_gb_per_s (expected link_gb_per_s)", spec.gpu->name));
  }
  const double block_bytes = gpu_block_bytes * spec.tp * spec.pp;
  constexpr double kGiB = 1073741824.0;
  const auto capacity = static_cast<std::int64_t>(std::floor(c.cpu_gib * kGiB / block_bytes));
  // GB/s is bytes per ns.
  return std::make_shared<const KvOffload>(capacity, block_bytes, gpu_block_bytes / link_gb_per_s,
                                           c.overlap);
}
}  // namespace

BuiltRun build_run(const RunConfig& config, RunCache* cache) {
  BuiltRun run;
  run.config = config;
  std::vector<std::string> dirs = config.catalog_dirs;
  for (const auto& d : Catalog::default_dirs()) dirs.push_back(d);
  run.catalog = cache ? cache->catalog(dirs) : std::make_shared<Catalog>(dirs);
  // The fleet's section is read first, so its errors come before any built part's.
  static_cast<void>(parse_scheduler_options(config.scheduler));
  // The serving engine's own semantics (an analytical cost model's engine profile: CUDA-graph
  // mode, async scheduling) hold wherever the config does not set them itself.
  const std::shared_ptr<const EngineProfile> engine =
      EngineProfile::of_cost_model(config.cost_model);
  const auto options_of = [&](const ConfigNode& scheduler) {
    SchedulerOptions o = parse_scheduler_options(scheduler);
    if (config.speculative) o.num_speculative_tokens = config.speculative->num_speculative_tokens;
    if (engine && engine->async_scheduling && chunked_prefill(scheduler, o) &&
        !scheduler.has("async_scheduling")) {
      o.async_scheduling = *engine->async_scheduling;
    }
    return o;
  };
  if (config.speculative) {
    const SpeculativeConfig& s = *config.speculative;
    const ModelSpec* draft = nullptr;
    if (s.method == SpeculativeMethod::kDraft) {
      // The draft model runs on the target's GPUs with its TP degree (vLLM's default).
      const ConfigNode at = s.node.at("draft_model");
      draft = &run.catalog->model(s.draft_model, at);
      for (const auto& g : config.replicas) {
        if (const std::string why = draft->tp_problem(g.tp); !why.empty()) {
          at.fail(fmt::format("draft model {} cannot run at tp {}: {}", draft->name, g.tp, why));
        }
      }
    }
    run.speculation = std::make_unique<Speculation>(s, draft, stream_seed(config.seed, 4));
  }
  std::vector<SchedulerOptions> group_options;  // each group's, for the fleet-wide checks
  ReplicaId next_id = 0;
  for (const auto& g : config.replicas) {
    ReplicaSpec spec;
    spec.gpu = &run.catalog->gpu(g.gpu, g.node.at("gpu"));
    spec.model = &run.catalog->model(
        g.model, g.node.has("model") ? g.node.at("model") : config.root.at("model"));
    spec.tp = g.tp;
    spec.pp = g.pp;
    spec.attention_dp = g.attention_dp;
    spec.moe_ep = g.ep;
    spec.weights = g.weights;
    spec.kv_dtype_bytes = g.kv_dtype_bytes;
    spec.cuda_graphs = g.cuda_graphs;
    spec.cuda_graph_mode = g.cuda_graph_mode;
    spec.cuda_graph_max_tokens = g.cuda_graph_max_tokens;
    SchedulerOptions options = options_of(g.scheduler);
    group_options.push_back(options);
    EngineProfile::default_graph_launch(engine.get(), g.node.has("cuda_graph_mode"),
                                        g.node.has("cuda_graph_max_tokens"), options.max_num_seqs,
                                        spec);
    spec.power_cap_w = g.power_cap_w;
    spec.topology = g.topology;  // "" = the GPU's own links
    if (const std::string why = spec.gpu->topology_problem(spec.links()); !why.empty()) {
      g.node.at("topology").fail(why);
    }
    if (const std::string why = spec.gpu->precision_problem(spec.weights); !why.empty()) {
      g.node.at("precision").fail(why);
    }
    if (const std::string why = spec.model->tp_problem(spec.attention_tp()); !why.empty()) {
      g.node.at("tp").fail(spec.attention_dp > 1 ? fmt::format("tp / attention_dp = {}", why)
                                                 : "tp = " + why);
    }
    if (const std::string why = spec.model->ep_problem(spec.moe_ep, spec.attention_dp);
        !why.empty()) {
      g.node.at(g.node.has("ep") ? "ep" : "attention_dp").fail(why);
    }
    if (const std::string why = spec.model->pp_problem(spec.pp); !why.empty()) {
      g.node.at("pp").fail(why);
    }
    spec.cluster = config.cluster;
    if (const std::string why = spec.cluster.stage_placement_problem(spec.tp, spec.pp);
        !why.empty()) {
      g.node.at("tp").fail(why);
    }
    if (g.power_cap_w > 0) {
      if (const std::string why = spec.gpu->power_cap_problem(g.power_cap_w); !why.empty()) {
        g.node.at("power_cap_w").fail(why);
      }
    }
    if (options.max_model_len <= 0) options.max_model_len = spec.model->max_position_embeddings;
    if (spec.model->max_position_embeddings > 0 &&
        options.max_model_len > spec.model->max_position_embeddings) {
      // vLLM refuses to start; in a mixed fleet the router would send such contexts here.
      g.scheduler.at("max_model_len")
          .fail(fmt::format("{} is longer than {}'s context ({} tokens, max_position_embeddings)",
                            options.max_model_len, spec.model->name,
                            spec.model->max_position_embeddings));
    }
    const bool chunked = chunked_prefill(g.scheduler, options);
    if (!chunked && options.max_num_batched_tokens > 0 &&
        options.max_num_batched_tokens < options.max_model_len &&
        !g.scheduler.has("max_model_len")) {
      // Without chunking a prompt must fit one iteration: cap the model length at the budget.
      options.max_model_len = options.max_num_batched_tokens;
    }
    if (!chunked && options.max_num_batched_tokens > 0 &&
        options.max_num_batched_tokens < options.max_model_len) {
      g.scheduler.fail(fmt::format(
          "max_num_batched_tokens ({}) must be ≥ max_model_len ({}) without chunked prefill",
          options.max_num_batched_tokens, options.max_model_len));
    }
    std::unique_ptr<ReplicaScheduler> first = make_replica_scheduler(g.scheduler, options);
    if (first->token_budget() < options.max_num_seqs) {
      // vLLM refuses to start: a full batch of decodes would not fit one iteration's budget.
      // Blame the key the user wrote (the budget's, else max_num_seqs).
      const char* budget_key =
          g.scheduler.has("chunk_size") ? "chunk_size" : "max_num_batched_tokens";
      const ConfigNode at = g.scheduler.has(budget_key)       ? g.scheduler.at(budget_key)
                            : g.scheduler.has("max_num_seqs") ? g.scheduler.at("max_num_seqs")
                                                              : g.scheduler;
      at.fail(fmt::format("{} ({}{}) must be ≥ max_num_seqs ({}), as vLLM requires", budget_key,
                          first->token_budget(),
                          options.max_num_batched_tokens > 0 ? "" : ", the kind's default",
                          options.max_num_seqs));
    }
    std::int64_t blocks = options.num_gpu_blocks;
    if (blocks <= 0) {
      // Activations are reserved for the budget the scheduler will really use (its default when
      // the config gives none: sarathi 512, chunked vllm 2048, whole prompts otherwise).
      const MemoryPlan plan =
          plan_kv_memory(spec, options.gpu_memory_utilization, options.block_size,
                         first->token_budget(), options.max_num_seqs);
      if (plan.num_blocks <= 0) {
        constexpr double kGiB = 1073741824.0;
        g.node.fail(fmt::format(
            "{} does not fit on {} × {} (tp {}, pp {}): weights {:.1f} GiB + activations "
            "{:.1f} GiB per GPU{} leave no room for one KV block in {:.1f} GiB × utilization {} "
            "(expected more GPUs, fp8 weights, a higher gpu_memory_utilization or a smaller "
            "token budget)",
            spec.model->name, g.tp * g.pp, spec.gpu->name, g.tp, g.pp, plan.weight_bytes / kGiB,
            plan.activation_bytes / kGiB,
            g.pp > 1 ? fmt::format(" of pipeline stage {} of {}", plan.stage + 1, g.pp)
                     : std::string(),
            plan.gpu_bytes / kGiB, options.gpu_memory_utilization));
      }
      blocks = plan.num_blocks;
      if (run.speculation) {
        // The drafter's weights come off the free memory, and each block also holds its KV.
        const Speculation::Memory d =
            run.speculation->memory(spec, options.gpu_memory_utilization, options.block_size,
                                    first->token_budget(), options.max_num_seqs);
        const double free = options.gpu_memory_utilization * plan.gpu_bytes - plan.weight_bytes -
                            plan.activation_bytes - d.weight_bytes;
        blocks = static_cast<std::int64_t>(std::floor(free / (plan.block_bytes + d.block_bytes)));
        if (blocks <= 0) {
          config.speculative->node.fail(fmt::format(
              "the drafter does not fit beside {} on {} (its weights {:.1f} GiB per GPU leave no "
              "room for one KV block; expected a smaller draft model or more GPUs)",
              spec.model->name, spec.gpu->name, d.weight_bytes / 1073741824.0));
        }
      }
    }
    if (blocks * options.block_size < options.max_model_len) {
      // vLLM refuses to start when one request of max_model_len could not fit the KV cache.
      const ConfigNode at =
          g.scheduler.has("max_model_len") ? g.scheduler.at("max_model_len") : g.node;
      at.fail(fmt::format(
          "max_model_len {} does not fit {}'s KV cache on {} × {} ({} blocks of {} = {} tokens), "
          "as vLLM refuses (expected a smaller max_model_len, more GPUs or more memory)",
          options.max_model_len, spec.model->name, g.tp * g.pp, spec.gpu->name, blocks,
          options.block_size, blocks * options.block_size));
    }
    std::shared_ptr<const KvOffload> tier;
    if (config.kv_offload) {
      tier = make_kv_offload(*config.kv_offload, spec, options, *first, run.speculation.get());
    }
    for (int i = 0; i < g.count; ++i) {
      auto scheduler = i == 0 ? std::move(first) : make_replica_scheduler(g.scheduler, options);
      KvCache kv(blocks, options.block_size, options.watermark);
      kv.set_prefix_caching(options.enable_prefix_caching);
      if (tier) kv.set_offload(std::make_shared<KvOffload>(*tier));  // each replica its own
      run.fleet.push_back(std::make_unique<Replica>(next_id++, spec, std::move(scheduler), kv,
                                                    options.max_model_len));
      run.fleet.back()->role = g.role;
      run.fleet.back()->group = static_cast<int>(&g - config.replicas.data());
      if (g.batches_in_flight > 0) run.fleet.back()->max_in_flight = g.batches_in_flight;
    }
  }
  run.router = make_router(config.router, stream_seed(config.seed, 1));
  // Each group's scheduler, its own keys laid over the fleet's, must take its part.
  if (config.disaggregated()) {
    for (std::size_t i = 0; i < config.replicas.size(); ++i) {
      check_disaggregation_roles(config.replicas[i].scheduler, group_options[i]);
    }
    run.decode_router = make_decode_router(config.decode_router, stream_seed(config.seed, 3));
  }
  for (std::size_t i = 0; i < config.replicas.size(); ++i) {
    check_fleet_queue(config.router, config.replicas[i].scheduler, group_options[i]);
  }
  run.cost_model = cache ? cache->cost_model(config.cost_model, dirs)
                         : std::shared_ptr<const CostModel>(make_cost_model(config.cost_model));
  for (const auto& g : config.replicas) {
    if (const std::string why = run.cost_model->power_cap_problem(g.power_cap_w); !why.empty()) {
      g.node.at("power_cap_w").fail(why + " (expected cost_model kind analytical, or no cap)");
    }
    if ((g.ep > 1 || g.attention_dp > 1) && !run.cost_model->prices_moe_parallelism()) {
      g.node.at(g.ep > 1 ? "ep" : "attention_dp")
          .fail(fmt::format("the {} cost model does not price expert parallelism or attention data "
                            "parallelism (expected cost_model kind analytical)",
                            run.cost_model->name()));
    }
  }
  if (config.autoscaling) {
    const AutoscalingConfig& a = *config.autoscaling;
    if (run.router->queue() != nullptr) {
      config.router.at("kind").fail(fmt::format(
          "router '{}' holds requests in a fleet-level queue, which an autoscaled fleet cannot "
          "drain (expected a router that places each request, e.g. least_outstanding)",
          run.router->name()));
    }
    if (a.metric == AutoscaleMetric::kSloMiss && !config.slo.any()) {
      a.node.at("metric").fail("metric slo_miss needs an slo section (expected slo bounds)");
    }
    run.autoscaler = std::make_unique<Autoscaler>(a, provisioning_delay(a, run.fleet.front()->spec),
                                                  run.fleet.size(), config.slo,
                                                  run.cost_model->request_overhead_ns());
  }
  run.workload = make_workload(config.workload, stream_seed(config.seed, 0));
  std::vector<std::string> classes;
  if (config.slo.named()) {
    for (const SloClass& c : config.slo.classes()) classes.push_back(c.name);
  }
  run.workload->set_slo_classes(classes);
  setup_lora(config, run);
  return run;
}

}  // namespace servesim
