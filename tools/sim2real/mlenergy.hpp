#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/output/steady_state_window.hpp"
#include "sim/util/constants.hpp"
#include "workloads/length_sampler.hpp"

namespace servesim::sim2real {

// One measured configuration of the ML.ENERGY leaderboard: a model on `num_gpus` GPUs of one
// kind serving with vLLM at batch max_num_seqs, every seat kept full, and what was measured over
// its steady state. v3 files (`models/<org>__<model>__<task>.json`) hold a model's whole sweep
// with output-length histograms and ITL percentiles; v2 files (`…/bs<B>+tp<T>+pp<P>.json`) hold
// one configuration with mean output length, energy per request and mean time per output token.
struct EnergyRow {
  std::string file;
  std::string where;   // "<file>: configurations[3]" (v3) or "<file>" (v2): for errors and reports
  std::string source;  // "v3" or "v2"
  std::string model;   // the file's model id as written
  std::string gpu;     // the file's GPU name as written
  std::string task;
  int tp = 1;
  int num_gpus = 1;
  std::int64_t max_num_seqs = 0;
  double avg_batch = kNaN;
  double avg_output_tokens = 0;
  LengthHistogram output;  // v3: the row's histogram; v2: exponential with the row's mean
  // Measured (NaN where the source has no such figure).
  double output_tok_s = kNaN;
  double itl_p50_ms = kNaN;  // v2: the mean time per output token
  double itl_p90_ms = kNaN;
  double power_w = kNaN;  // mean, summed over the GPUs
  double j_per_token = kNaN;
};

// Reads a v3 model file or a v2 configuration file (told apart by their keys). Throws InputError
// naming the file and the field for a missing or malformed field, a batch of 0, or a file with
// no configuration.
std::vector<EnergyRow> read_energy_file(const std::string& path);

// How a row becomes a run: the benchmark's request set rebuilt (multi-turn LMArena chat, every
// request sent at t = 0, max_num_seqs seats) and vLLM 0.11's settings.
struct EnergyReplayOptions {
  std::uint64_t seed = 42;  // sim2real's --seed default
  // Prompt lengths of LMArena chat: the mean over the request file is ML.ENERGY's own figure for
  // its Text Conversation set (634 tokens); user messages and logged replies keep Chatbot Arena's
  // mean lengths (Chiang et al. 2024, Table 1: 94.9 and 269.0 tokens), so the turns per
  // conversation are what makes that mean: 94.9·T + 269.0·(T − 1) = 634, T = 2.48. Lognormal
  // message lengths of shape 1; 5 chat-template tokens per message on top.
  double prompt_tokens_mean = 634;
  double turns_mean = (634 + 269.0) / (94.9 + 269.0);
  double reply_ratio = 269.0 / 94.9;
  double sigma = 1.0;
  std::int32_t template_tokens = 5;
  // GPQA (task "gpqa"): one multiple-choice question per request, 224 tokens on average
  // (ML.ENERGY's figure for its Problem Solving set), little spread.
  double gpqa_prompt_tokens_mean = 224;
  double gpqa_sigma = 0.3;
  std::string engine = "vllm-v1";
  // vLLM 0.11's sampler, as the benchmark's requests use it (top_p 0.95, repetition penalty 1.1).
  bool top_p = true;
  bool penalties = true;
};

// The benchmark's request count for a batch: 1,024 requests, repeated 2× from batch 256 and 3×
// from 768 (its H100 sweep files).
std::int64_t energy_requests(std::int64_t max_num_seqs);

// The run (YAML) that replays `row`: sim2real --mlenergy writes it with --out, and
// configs/experiments/mlenergy_h100.yaml is its hand-kept twin.
std::string energy_config_yaml(const EnergyRow& row, const EnergyReplayOptions& options);

struct EnergyResult {
  const EnergyRow* row = nullptr;
  std::string config_yaml;
  // Over the benchmark's steady-state window: from the moment max_num_seqs requests have their
  // first token to the moment all but max_num_seqs + 1 have finished.
  SteadyStateWindow::Metrics sim;
  std::int64_t requests = 0;
  std::int64_t preemptions = 0;
  double prefix_hit_rate = 0;  // prompt tokens served from the prefix cache
  double wall_s = 0;
};

EnergyResult replay_energy_row(const EnergyRow& row, const EnergyReplayOptions& options);
// Every row, concurrently (oneTBB), results in input order; the first failing row's error (in
// input order) is thrown.
std::vector<EnergyResult> replay_energy_rows(const std::vector<EnergyRow>& rows,
                                             const EnergyReplayOptions& options);

// Signed error (%) of sim against real; NaN where either is missing.
double signed_error_pct(double sim, double real);
// The report: per row, simulated, measured and signed error per metric; medians of |error| per
// metric overall (`median`), per model and per batch bucket (8–32, 64–192, ≥ 256).
nlohmann::json energy_report_json(const std::vector<EnergyResult>& results,
                                  const EnergyReplayOptions& options);
std::string energy_report_table(const nlohmann::json& report);

}  // namespace servesim::sim2real
