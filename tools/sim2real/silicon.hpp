#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run_cache.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/util/constants.hpp"

namespace servesim::sim2real {

// Who measured a row, which decides its server flags and client (silicon_launch.hpp):
//   kInferenceX       InferenceX's database ("db-dump/…"): its current launch scripts and
//                     benchmark_lib.sh client;
//   kInferenceX2025   its 2025 result files ("source_file=<date>.csv"): the scripts of then;
//   kAiConfigurator   AIConfigurator's own collection ("source_file=<path>/…"): its generator's
//                     flags and the aiperf client.
enum class SiliconCollection { kInferenceX, kInferenceX2025, kAiConfigurator };

// One worker pool of a disaggregated row (its prefill_* or decode_* columns): how many workers,
// each laid out as an aggregated row's columns are (silicon_layout), and the batch the file states
// per attention-DP rank (0 when empty). The file's decode batch is the client's concurrency over
// the decode ranks; its prefill batch is 1 on every row, no launch's.
struct SiliconPool {
  std::int64_t workers = 0;  // 0: the row does not say
  std::int64_t batch = 0;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t attention_dp = 1;
  bool attention_dp_stated = false;
  std::int64_t moe_tp = 1;
  std::int64_t moe_ep = 1;
};

// One row of an InferenceX silicon file (AIConfigurator's silicon_sample.csv layout): one served
// configuration (model, system, engine and version, precision, parallel layout, ISL/OSL, client
// concurrency) and its measured mean TTFT and TPOT.
struct SiliconRow {
  std::string id;
  std::string where;   // "file:line", for errors and reports
  std::string source;  // silicon_data_source: which collection measured it
  SiliconCollection collection() const;
  std::string backend;
  std::string backend_version;
  std::string model_path;
  std::string system;
  std::string precision;   // "" is the checkpoint's own (bf16)
  std::string gemm_quant;  // the GEMMs' quantization (fp8, fp8_block, nvfp4, mxfp4; "" none)
  std::string mode;        // agg or disagg
  std::int64_t isl = 0;
  std::int64_t osl = 0;
  // The client's --max-concurrency: silicon_concurrency= in silicon_data_source, else an
  // aggregated row's batch_size; 0 when the row states neither.
  std::int64_t concurrency = 0;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t attention_dp = 1;
  bool attention_dp_stated = false;  // attention_dp_size was not empty
  std::int64_t moe_tp = 1;
  std::int64_t moe_ep = 1;
  // A disaggregated row's pools; `pools` is false when the file has no prefill_/decode_ columns.
  bool pools = false;
  SiliconPool prefill;
  SiliconPool decode;
  double ttft_ms = kNaN;
  double tpot_ms = kNaN;
};

// A row's serving layout as servesim's replica keys: GPUs per pipeline stage (`tp`), attention
// data-parallel groups and expert-parallel ranks among them (ReplicaSpec), or why the row's
// columns name none.
struct SiliconLayout {
  std::int64_t gpus = 1;
  std::int64_t attention_dp = 1;
  std::int64_t ep = 1;
  std::string problem;
};
// The file writes layouts two ways (silicon.cpp states the rules and the rows they were read
// from); this reads both.
SiliconLayout silicon_layout(const SiliconRow& row);
// `row` as one of its pools serves it: the pool's layout columns in place of the row's.
SiliconRow pool_row(const SiliconRow& row, const SiliconPool& pool);

// Reads a silicon CSV. The prefill_* and decode_* columns are read when the file has them (all
// or none) and only on disaggregated rows. A missing column, a count that is not a whole number ≥ 1
// (ISL, OSL, a stated concurrency or layout size; an empty one is unstated) or a measured time that
// is not a positive number is an InputError naming the file, the line and the column.
std::vector<SiliconRow> read_silicon_file(const std::string& path);

// The weight format (config `precision:`) of a row: its precision column, refined by its GEMM
// quantization (fp8 with fp8_block scales, fp4 as nvfp4 or mxfp4); "" when servesim has none.
std::string silicon_weight_format(const SiliconRow& row);

// GPUs in one NVLink domain of a catalog GPU: a Grace-Blackwell rack's 72
// (configs/hardware/gb200.yaml), elsewhere an 8-GPU node.
int silicon_nvlink_domain(const std::string& gpu);

// The catalog's GPU of an InferenceX system name (h100_sxm, b200_sxm, gb200, …); "" when it has
// none.
std::string silicon_system_gpu(const std::string& system);

// The catalog's model for a checkpoint: its own name, else the model a quantized republication
// (org/Name-FP8, -NVFP4) was made from, found by name under any organization; "" when none.
std::string silicon_catalog_model(const std::string& path, const std::vector<std::string>& models);

struct SiliconOptions {
  std::uint64_t seed = 42;
  // The engine profile (configs/engines/<name>.yaml) of each backend's rows; a backend not
  // listed is not run.
  std::map<std::string, std::string> engines{
      {"vllm", "vllm-v1"}, {"sglang", "sglang"}, {"trtllm", "trtllm"}};
  // > 0: the client sends this many prompts per seat, one seat's worth of them warm-ups, in place
  // of the row's collection's client (a shorter run that still reaches the steady state).
  std::int64_t prompts_per_seat = 0;
};

// What a row becomes: the config that replays it, or why servesim cannot express it yet.
struct SiliconPlan {
  std::string config_yaml;
  std::string not_run;     // non-empty: the reason
  std::int64_t gpus = 0;   // the GPUs the run serves on (both pools of a disaggregated row)
  std::string model = {};  // the catalog's model it runs (a quantized checkpoint's base model)
};

// The run of `row`: InferenceX's client (workload.client: num_prompts 10 × concurrency, 2 ×
// concurrency warm-ups, random lengths in [⌊0.8 L⌋, L], ignore_eos) against the server its
// engine is launched as (server_launch, silicon_launch.hpp), on the catalog's GPU and model.
SiliconPlan plan_silicon_row(const SiliconRow& row, Catalog& catalog,
                             const SiliconOptions& options);

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
// refuses) is thrown, naming the row. The runs share catalogs and cost models through `cache`
// (one of the call's own when null), which prices every step as a run built alone would.
std::vector<SiliconResult> replay_silicon_rows(const std::vector<SiliconRow>& rows,
                                               const SiliconOptions& options,
                                               RunCache* cache = nullptr);

// The report: rows[] (id, metrics.ttft_mean and metrics.tpot_mean each {real, sim, error_pct}),
// median |error| overall and per partition (engine, system, precision, model, concurrency bucket,
// ISL/OSL, engine × system × precision), coverage (rows run of all rows) and not_run[] (id,
// reason), with the count of each reason.
nlohmann::json silicon_report_json(const std::vector<SiliconResult>& results,
                                   const SiliconOptions& options);
std::string silicon_report_table(const nlohmann::json& report);

}  // namespace servesim::sim2real
