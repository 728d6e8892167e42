#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/util/constants.hpp"

namespace servesim::sim2real {

// One row of an InferenceX silicon file (AIConfigurator's silicon_sample.csv layout): one served
// configuration (model, system, engine and version, precision, parallel layout, ISL/OSL, client
// concurrency) and its measured mean TTFT and TPOT.
struct SiliconRow {
  std::string id;
  std::string where;  // "file:line", for errors and reports
  std::string backend;
  std::string backend_version;
  std::string model_path;
  std::string system;
  std::string precision;  // "" is the checkpoint's own (bf16)
  std::string mode;       // agg or disagg
  std::int64_t isl = 0;
  std::int64_t osl = 0;
  // The client's --max-concurrency: batch_size for an aggregated row (silicon_concurrency= in
  // silicon_data_source when it is empty), silicon_concurrency= for a disaggregated one; 0 when
  // the row states neither.
  std::int64_t concurrency = 0;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t attention_dp = 1;
  std::int64_t moe_tp = 1;
  std::int64_t moe_ep = 1;
  double ttft_ms = kNaN;
  double tpot_ms = kNaN;
};

// Reads a silicon CSV. A missing column, a count that is not a whole number ≥ 1 (ISL, OSL, a
// stated concurrency or layout size; an empty one is unstated) or a measured time that is not a
// positive number is an InputError naming the file, the line and the column.
std::vector<SiliconRow> read_silicon_file(const std::string& path);

struct SiliconOptions {
  std::uint64_t seed = 42;
  std::string engine = "vllm-v1";  // the engine profile of every vLLM row
  double range_ratio = 0.8;        // InferenceX's --random-range-ratio
};

// What a row becomes: the config that replays it, or why servesim cannot express it yet.
struct SiliconPlan {
  std::string config_yaml;
  std::string not_run;  // non-empty: the reason
};

// The run of `row`: InferenceX's client (workload.client: num_prompts 10 × concurrency, 2 ×
// concurrency warm-ups, random lengths in [⌊0.8 L⌋, L], ignore_eos) against the server its launch
// scripts start (vLLM: --max-num-seqs = concurrency, --max-num-batched-tokens 8192, no prefix
// caching, max-model-len ISL + OSL + 20 at 1k/1k, + 256 with an 8k side, else 10240). `models`
// and `gpus` are the catalog's names.
SiliconPlan plan_silicon_row(const SiliconRow& row, const std::vector<std::string>& models,
                             const std::vector<std::string>& gpus, const SiliconOptions& options);

struct SiliconResult {
  const SiliconRow* row = nullptr;
  SiliconPlan plan;
  double ttft_ms = kNaN;  // simulated means over the measured requests (summary["client"])
  double tpot_ms = kNaN;
  std::int64_t preemptions = 0;
  double wall_s = 0;
};

// Every row: planned, and run where it can be, concurrently (oneTBB), results in input order,
// each pointing at its row (`rows` must outlive them). A run's own error (a config servesim
// refuses) is thrown, naming the row.
std::vector<SiliconResult> replay_silicon_rows(const std::vector<SiliconRow>& rows,
                                               const SiliconOptions& options);

// The report: rows[] (id, metrics.ttft_mean and metrics.tpot_mean each {real, sim, error_pct}),
// median |error| overall and per partition (engine, system, precision, model, concurrency bucket,
// ISL/OSL, engine × system × precision), coverage (rows run of all rows) and not_run[] (id,
// reason), with the count of each reason.
nlohmann::json silicon_report_json(const std::vector<SiliconResult>& results,
                                   const SiliconOptions& options);
std::string silicon_report_table(const nlohmann::json& report);

}  // namespace servesim::sim2real
