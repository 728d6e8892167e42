#include "schedulers/replica/scheduler_options.hpp"

#include <fmt/format.h>

#include "schedulers/registry.hpp"

namespace servesim {

SchedulerOptions parse_scheduler_options(const ConfigNode& node) {
  SchedulerOptions o;
  o.max_num_seqs = static_cast<std::int32_t>(node.get_positive_int("max_num_seqs", o.max_num_seqs));
  if (node.has("chunk_size") && node.has("max_num_batched_tokens")) {
    node.at("chunk_size").fail("give either chunk_size or max_num_batched_tokens, not both");
  }
  const char* budget_key = node.has("chunk_size") ? "chunk_size" : "max_num_batched_tokens";
  o.max_num_batched_tokens = static_cast<std::int32_t>(node.get_positive_int(budget_key, 0));
  o.block_size = static_cast<std::int32_t>(node.get_positive_int("block_size", o.block_size));
  if (node.has("gpu_memory_utilization")) {
    const ConfigNode n = node.at("gpu_memory_utilization");
    o.gpu_memory_utilization = n.as_double();
    if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1)) {
      n.fail(fmt::format("expected a fraction in (0, 1], got {}", o.gpu_memory_utilization));
    }
  }
  o.num_gpu_blocks = node.get_positive_int("num_gpu_blocks", 0);
  o.max_model_len = static_cast<std::int32_t>(node.get_positive_int("max_model_len", 0));
  o.enable_chunked_prefill = node.get_bool("enable_chunked_prefill", false);
  // vLLM V1 (a kind with chunked prefill) keeps no watermark; vLLM V0 (and Vidur's schedulers)
  // keep 1% of the blocks free at admission. An unknown kind is reported when it is built.
  const SchedulerEntry* entry = find_replica_scheduler(node.get_string("kind", ""));
  const bool v1 = entry != nullptr && entry->capabilities(o).chunked_prefill;
  o.watermark = node.get_fraction("watermark", v1 ? 0.0 : 0.01);
  o.enable_prefix_caching = node.get_bool("enable_prefix_caching", false);
  o.async_scheduling = node.get_bool("async_scheduling", false);
  o.preempt_for_deadline = node.get_bool("preempt_for_deadline", false);
  const std::int64_t wait = node.get_int("batch_wait_timeout_iters", 0);
  if (wait < 0 || wait > 1'000'000) {
    node.at("batch_wait_timeout_iters").fail("expected a step count in [0, 1000000]");
  }
  o.batch_wait_timeout_iters = static_cast<std::int32_t>(wait);
  o.batch_wait_max_tokens_ratio = node.get_fraction("batch_wait_max_tokens_ratio", 0.0);
  const std::int64_t recv = node.get_int("scheduler_recv_interval", 0);
  if (recv < 0 || recv > 1'000'000) {
    node.at("scheduler_recv_interval").fail("expected a step count in [0, 1000000]");
  }
  o.scheduler_recv_interval = static_cast<std::int32_t>(recv);
  return o;
}

}  // namespace servesim
