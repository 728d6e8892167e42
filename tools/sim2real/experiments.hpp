#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace servesim::sim2real {

// The seven measured metrics of a run (ms), as experiments.csv reports them.
struct Metrics {
  double e2e_mean = 0;
  double e2e_p90 = 0;
  double e2e_p99 = 0;
  double ttft_mean = 0;
  double ttft_p90 = 0;
  double ttft_p99 = 0;
  double itl_mean = 0;  // (E2E mean − TTFT mean) / (mean output tokens − 1)
};
// Metric names in table and JSON order ("e2e_mean", …, "itl_mean") and their values.
const std::vector<std::string>& metric_names();
double metric(const Metrics& m, std::size_t index);
void set_metric(Metrics& m, std::size_t index, double value);

struct Stage {
  double rate = 0;  // requests per second
  double duration_s = 0;
};

// One row of experiments.csv (the columns the replay and the scoring need; the rest are kept in
// `columns`).
struct Experiment {
  std::string id;
  std::string folder;
  std::string set;
  std::string model;     // Hugging Face id
  std::string hardware;  // GPU alias (H100)
  int tp = 1;
  int dp = 1;
  std::string precision;  // FP16 | BF16 | FP8
  std::string vllm_image;
  std::int64_t max_num_batched_tokens = 0;
  std::int64_t max_num_seqs = 0;
  std::int64_t max_model_len = 0;
  double gpu_mem_util = 0.9;
  std::optional<bool> cpu_kv_offload;    // empty column = unknown
  std::int64_t kv_blocks_total_gpu = 0;  // 0 = unknown
  std::string workload;
  std::string harness;
  std::vector<Stage> stages;
  std::int64_t n_requests_scheduled = 0;
  std::int64_t num_groups = 0;       // num_unique_system_prompts
  std::int64_t users_per_group = 0;  // users_per_system_prompt
  std::int32_t system_prompt_len = 0;
  std::int32_t question_len = 0;
  std::int32_t output_len = 0;
  std::optional<double> measured_output_len_mean;
  std::int64_t n_requests_trace = 0;
  std::int64_t n_failed_trace = 0;
  std::string notes;
  Metrics real;                     // summ_*
  std::vector<Metrics> stage_real;  // s0_*, s1_* (stages with metrics)
  std::string trace_file;           // resolved against the CSV's folder; "" = no trace
  int line = 0;                     // line in the CSV (for messages)
  std::map<std::string, std::string> columns;
};

// Reads experiments.csv (RFC 4180 quoting). Every row is validated; a bad value is an
// InputError "file:LINE: column 'x': expected …, got '…'". Relative trace_file paths resolve
// against the CSV's folder.
std::vector<Experiment> read_experiments(const std::string& path);

// One row of a measured trace (traces/<run>.csv).
struct TraceRequest {
  double arrival_s = 0;
  std::int32_t input_tokens = 0;
  std::int32_t output_tokens = 0;
  bool error = false;
  double e2e_ms = 0;
  double ttft_ms = 0;
};
// Reads a measured trace in row order (row i is simulated request i).
std::vector<TraceRequest> read_trace(const std::string& path);

}  // namespace servesim::sim2real
