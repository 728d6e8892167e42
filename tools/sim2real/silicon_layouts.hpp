#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/sim2real/silicon.hpp"
#include "tools/sim2real/silicon_frontier.hpp"

namespace servesim::sim2real {

// The question `plan --layouts` answers: which deployment of a model on a system (aggregated or
// disaggregated, each pool's TP / attention-DP / EP layout, worker counts, client concurrency)
// gives the most output tokens/s per GPU at a per-user speed, within a GPU budget.
struct LayoutQuery {
  std::string model;   // a catalog name or a checkpoint path (a silicon row's model_path)
  std::string system;  // an InferenceX system name: h100_sxm, h200_sxm, b200_sxm, gb200, …
  std::vector<std::string> engines = {"sglang", "trtllm", "vllm"};
  // Weight formats as a silicon row writes them: precision and GEMM quantization columns.
  struct Format {
    std::string precision;
    std::string gemm_quant;
  };
  std::vector<Format> formats;
  std::int64_t isl = 1024;
  std::int64_t osl = 1024;
  std::int64_t max_gpus = 8;  // GPUs of one deployment (both pools of a disaggregated one)
  bool aggregated = true;
  bool disaggregated = true;
  // Client concurrencies are these requests per attention rank of a server (aggregated) or of
  // the decode pool (disaggregated).
  std::vector<std::int64_t> per_rank = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::int64_t max_concurrency = 8192;
  // A layout's higher concurrencies are not simulated once one is slower per user than this.
  double min_user_speed = 10;
};

// The candidate deployments of `query`, each as the silicon row that describes it (no
// measurement; `source` "servesim plan --layouts", launched by InferenceX's current scripts and
// measured by its client). One server is laid out TP g (attention and experts sharded g ways),
// and for MoE models TEP g (experts over g ranks) and DEP g (attention data parallel g ways,
// experts over g ranks), g a power of two within the budget and one NVLink domain; layouts the
// model cannot be split into, or whose weights leave no KV, are dropped. Aggregated: one server
// at each concurrency (more servers of one kind serve the same tokens/s per GPU). Disaggregated:
// prefill servers of the narrowest width that holds the model (TEP and DEP for MoE models),
// decode servers of every layout, worker counts prefill:decode 1:4, 1:2, 1:1, 2:1, 3:1, 4:1
// within the budget. Concurrency is query.per_rank requests per attention rank of the server or
// of the decode pool, up to query.max_concurrency. A layout's candidates are consecutive, by
// rising concurrency. Throws InputError for a model the catalog lacks or a format, engine or GPU
// it cannot price.
std::vector<SiliconRow> layout_candidates(const LayoutQuery& query, const SiliconOptions& options);

// One simulated candidate and its place against the others.
struct LayoutResult {
  SiliconResult run;    // run.row points into LayoutSearch::rows
  FrontierPoint point;  // NaN when not simulated
  bool on_frontier = false;
  bool pruned = false;  // not simulated: a lower concurrency of its layout stopped the search
};

struct LayoutSearch {
  std::shared_ptr<const std::vector<SiliconRow>> rows;
  std::vector<LayoutResult> results;  // one per row, in row order
  std::size_t runs = 0;               // candidates simulated
  double wall_s = 0;
};

// Simulates the candidates (replay_silicon_rows), each layout by rising concurrency until it is
// slower per user than query.min_user_speed or past its peak tokens/s per GPU (the rest pruned),
// and marks the frontier: the candidates no other beats on both tokens/s per user and per GPU.
LayoutSearch search_layouts(const LayoutQuery& query, const SiliconOptions& options);

// The frontier of `results` (indices, by increasing tokens/s per user): points not dominated on
// both axes. A point equal to another on both is kept once (the first).
std::vector<std::size_t> pareto_frontier(const std::vector<FrontierPoint>& points);

// The candidate of most tokens/s per GPU whose tokens/s per user is at least `min_user_speed`
// and whose mean TTFT is at most `max_ttft_ms` (NaN: no bound); nullptr when none is.
const LayoutResult* layout_pick(const LayoutSearch& search, double min_user_speed,
                                double max_ttft_ms);

// How a candidate row is deployed, in words: "agg sglang fp8 DEP8 ×1 c64" or
// "disagg trtllm nvfp4 prefill TEP4 ×2 + decode DEP16 ×1 c1024".
std::string layout_label(const SiliconRow& row);

// A row's deployment as comparable fields (engine, format, mode, each pool's GPUs, attention-DP
// and EP sizes and workers), for finding a measured row of the same layout.
struct LayoutKey {
  std::string engine;
  std::string format;
  std::string mode;
  std::int64_t gpus[2] = {0, 0};  // per worker: [0] the server or prefill, [1] decode
  std::int64_t dp[2] = {1, 1};
  std::int64_t ep[2] = {1, 1};
  std::int64_t workers[2] = {1, 0};
  bool operator==(const LayoutKey&) const = default;
};
LayoutKey layout_key(const SiliconRow& row);

// How far apart two layouts are: 0 for the same; mode, engine and format differences first, then
// per pool |log2| of the GPU ratio, a different attention-DP or EP choice, |log2| of the worker
// ratio.
double layout_distance(const LayoutKey& a, const LayoutKey& b);

// The search as JSON: query, runs, wall_s, candidates[] (label, mode, engine, format,
// concurrency, gpus, ttft_ms, tpot_ms, tokens_per_s_per_user, tokens_per_s_per_gpu, on_frontier,
// not_run), frontier[] (indices) and picks[] per per-user speed bound.
nlohmann::json layout_search_json(const LayoutQuery& query, const LayoutSearch& search,
                                  const std::vector<double>& bounds, double max_ttft_ms);
std::string layout_search_table(const nlohmann::json& doc);

}  // namespace servesim::sim2real
