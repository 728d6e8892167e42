#pragma once

#include <cstdint>

#include "sim/config/config_node.hpp"

namespace servesim {

// The `scheduler:` section shared by every replica scheduler. Keys use vLLM's own names.
struct SchedulerOptions {
  std::int32_t max_num_seqs = 128;
  std::int32_t max_num_batched_tokens = 0;  // 0 = the kind's default
  std::int32_t block_size = 16;
  double gpu_memory_utilization = 0.9;
  std::int64_t num_gpu_blocks = 0;  // 0 = from the memory planner
  double watermark = 0.01;  // fraction of blocks kept free at admission (parsed default: 0 for
                            // vLLM V1 chunked prefill, 0.01 otherwise)
  std::int32_t max_model_len = 0;  // 0 = the model's max_position_embeddings
  bool enable_chunked_prefill = false;
  bool enable_prefix_caching = false;  // vLLM automatic prefix caching (block level)
  // vLLM V1 async scheduling (default on since about v0.13): the next batch is formed while the
  // current step runs, so a request arriving during a step joins the batch after the next one.
  // Chunked-prefill (sarathi) scheduling only.
  bool async_scheduling = false;
  // edf only: a waiting request whose KV does not fit preempts a running one with a later deadline.
  bool preempt_for_deadline = false;
  // orca only: TensorRT-LLM's batch waiting (orca_scheduler.hpp); 0 = off.
  std::int32_t batch_wait_timeout_iters = 0;
  double batch_wait_max_tokens_ratio = 0;
  // sarathi and vllm: SGLang's --scheduler-recv-interval (scheduler_base.hpp); 0 or 1 = off.
  std::int32_t scheduler_recv_interval = 0;
  // Speculative decoding (the run's `speculative:` section, not a scheduler key): draft tokens
  // each decode verifies; 0 = none.
  std::int32_t num_speculative_tokens = 0;
};

// Keys every scheduler kind accepts (each kind may add its own).
inline constexpr std::string_view kCommonSchedulerKeys[] = {
    "kind",       "max_num_seqs",           "max_num_batched_tokens",
    "block_size", "gpu_memory_utilization", "num_gpu_blocks",
    "watermark",  "max_model_len",          "enable_chunked_prefill",
    "chunk_size", "enable_prefix_caching",  "async_scheduling"};

// Reads the common keys (and `chunk_size`, Sarathi's name for the token budget).
SchedulerOptions parse_scheduler_options(const ConfigNode& node);

}  // namespace servesim
