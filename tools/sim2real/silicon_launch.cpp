// How each silicon row's server and client were launched, as servesim config. Three collections
// feed the file (SiliconRow::collection): InferenceX's database and its 2025 result files, run by
// InferenceX's launch scripts and its benchmark_serving client; and AIConfigurator's own
// collection, whose launch is its generator's (aiconfigurator: generator/rule_plugin/*.rule and
// backend_templates, the only published launch of those rows) and whose client is its aiperf.
#include "tools/sim2real/silicon_launch.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sim/hardware/precision.hpp"
#include "sim/hardware/replica_spec.hpp"

namespace servesim::sim2real {
namespace {

// InferenceX's vLLM scripts: max-model-len ISL + OSL + 20 at 1k/1k, + 256 with an 8k side, else
// 10240 (or ISL + OSL when longer).
std::int64_t max_model_len(std::int64_t isl, std::int64_t osl) {
  if (isl == 1024 && osl == 1024) return isl + osl + 20;
  if (isl == 8192 || osl == 8192) return isl + osl + 256;
  return std::max<std::int64_t>(10240, isl + osl);
}

std::int64_t ceil32(std::int64_t n) { return (n + 31) / 32 * 32; }

// The SGLang versions whose AIConfigurator template writes --enable-mixed-chunk
// (backend_templates/sglang/cli_args.<version>.j2); its 0.5.1.post1 template and its default
// one look the flag up under another key ("enable-mix-chunk") and never write it.
bool aic_sglang_mixes(const std::string& version) {
  for (const char* v : {"0.5.3.post2", "0.5.4.post3", "0.5.6.post2"}) {
    if (version == v) return true;
  }
  return false;
}

// The scheduler section's shared keys, kept in `l` as numbers too.
void set_limits(ServerLaunch& l, std::int64_t tokens, std::int64_t seqs, std::int64_t len,
                double memory) {
  l.scheduler += fmt::format(
      "  max_num_batched_tokens: {}\n  max_num_seqs: {}\n  max_model_len: {}\n"
      "  gpu_memory_utilization: {:.4f}\n  enable_prefix_caching: false\n",
      tokens, seqs, len, memory);
  l.tokens = tokens;
  l.seqs = seqs;
  l.max_model_len = len;
  l.memory_fraction = memory;
}

// Weights per GPU over its memory: what the engines' memory rules start from.
double weight_share(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu,
                    const ModelSpec& model, const std::string& precision) {
  const double bytes = model.weight_bytes(precision_named(precision).value_or(Precision::kBf16));
  return bytes / static_cast<double>(layout.gpus * row.pp) / gpu.device_memory_bytes();
}

// vLLM V1: chunked prefill. InferenceX's Llama-3.1-70B scripts (benchmarks/70b_fp8_{h100,h200,
// b200}*.sh, 70b_fp4_b200*.sh of the 2025 tree these rows were measured with; the current tree
// no longer carries them): --max-num-batched-tokens 8192, async scheduling, no prefix caching,
// gpu-memory-utilization 0.9; on H200 and B200 kv-cache-dtype fp8; on B200 cudagraph_mode
// FULL_DECODE_ONLY and --max-num-seqs 512 (else CONC). Other rows: --max-num-seqs CONC,
// piecewise graphs, the model's KV dtype. AIConfigurator's generator (rule_plugin/vllm.rule with
// its 0.12.0 template, which writes no token budget): --max-num-seqs 512 below a batch of 512,
// else twice the batch; --max-model-len ISL + OSL + 1500.
ServerLaunch vllm_launch(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu) {
  const std::int64_t c = row.concurrency;
  const bool generated = row.collection() == SiliconCollection::kAiConfigurator;
  const bool scripted = !generated && row.model_path.find("Llama-3.1-70B") != std::string::npos;
  const bool blackwell = gpu.arch == "blackwell";
  const std::int64_t seqs = generated ? (c < 512 ? 512 : 2 * c) : scripted && blackwell ? 512 : c;
  ServerLaunch l;
  l.graph_mode = scripted && blackwell ? "decode_only" : "piecewise";
  l.graph_max_tokens = vllm_v1_graph_max_tokens(seqs);
  if (scripted && gpu.name != "h100-sxm") l.kv_cache_dtype = "fp8";
  l.scheduler = "scheduler:\n  kind: sarathi\n";
  const std::int64_t len = generated ? row.isl + row.osl + 1500 : max_model_len(row.isl, row.osl);
  set_limits(l, std::max<std::int64_t>(8192, seqs) * layout.attention_dp, seqs, len, 0.9);
  return l;
}

// InferenceX's SGLang scripts that pass --scheduler-recv-interval (unchanged in this respect
// since September 2025 for DeepSeek on B200): dsr1_fp8_b200.sh (TP 8: 30 from CONC 16, else 10;
// TP 4: 10), dsr1_fp4_b200.sh (30 from CONC 16, else 10; 1 with DP attention),
// qwen3.5_{fp8,fp4}_b200.sh (30 above CONC 4, else 10), qwen3.5_bf16_b200.sh (as dsr1_fp4) and
// qwen3.5_fp8_h100.sh (a table by CONC). Their other scripts (H200, GB200, the dense models')
// pass none: 0.
std::int64_t sglang_recv_interval(const SiliconRow& row, const SiliconLayout& layout,
                                  const GpuSpec& gpu) {
  const std::int64_t c = row.concurrency;
  if (row.collection() == SiliconCollection::kAiConfigurator) return 0;
  const bool deepseek = row.model_path.find("DeepSeek") != std::string::npos;
  const bool qwen35 = row.model_path.find("Qwen3.5") != std::string::npos;
  if (gpu.name == "b200" && deepseek) {
    if (layout.attention_dp > 1) return 1;
    if (row.precision == "fp8" && layout.gpus == 4) return 10;
    return c >= 16 ? 30 : 10;
  }
  if (gpu.name == "b200" && qwen35) {
    if (row.precision == "bf16" || row.precision.empty()) return c >= 16 ? 30 : 10;
    return c > 4 ? 30 : 10;
  }
  if (gpu.name == "h100-sxm" && qwen35) {
    if (c <= 4) return 2;
    if (c <= 8) return 60;
    if (c <= 16) return 30;
    if (c <= 32) return 1200;
    if (c <= 64) return 600;
    return 1920;
  }
  return 0;
}

// The limits InferenceX's SGLang DeepSeek scripts set themselves (--chunked-prefill-size,
// --cuda-graph-max-bs, --max-running-requests, --mem-fraction-static): dsr1_fp8_h200.sh 32768,
// 512 at 1k/1k else 256 (both), 0.82; dsr1_fp8_b200.sh at TP 8 32768, 128, 0.82 and at TP 4 8192,
// 32, 0.95; dsr1_fp4_b200.sh 16384 (32768 with DP attention), 256, 0.85. None elsewhere.
struct SglangLimits {
  std::int64_t chunk = 0;
  std::int64_t running = 0;  // graph batch and running requests alike
  double memory = 0;
};
std::optional<SglangLimits> sglang_script_limits(const SiliconRow& row, const SiliconLayout& layout,
                                                 const GpuSpec& gpu) {
  if (row.collection() == SiliconCollection::kAiConfigurator ||
      row.model_path.find("DeepSeek") == std::string::npos) {
    return std::nullopt;
  }
  if (gpu.name == "h200" && row.precision == "fp8") {
    return SglangLimits{32768, row.isl == 1024 && row.osl == 1024 ? 512 : 256, 0.82};
  }
  if (gpu.name == "b200" && row.precision == "fp8") {
    return layout.gpus == 4 ? SglangLimits{8192, 32, 0.95} : SglangLimits{32768, 128, 0.82};
  }
  if (gpu.name == "b200" && row.precision == "fp4") {
    return SglangLimits{layout.attention_dp > 1 ? 32768 : 16384, 256, 0.85};
  }
  return std::nullopt;
}

// SGLang (sglang/srt/server_args.py _handle_gpu_memory_settings): chunked_prefill_size 8192
// below 160 GB of GPU memory, 16384 from it; cuda_graph_max_bs 256 at TP < 4, 512 from TP 4
// (512 from 160 GB); CUDA graphs for decode batches only; mem_fraction_static (GPU memory −
// reserve) / GPU memory, the reserve 512 MB + 1.5 × the chunk + 2 × the graph batch + TP / 8 GB,
// at least 10 GB. Without --enable-mixed-chunk a step is a prefill batch or a decode batch,
// prefill first (scheduler.py get_next_batch_to_run): servesim's `vllm` rule, whose prompts are
// whole; a prompt longer than the chunk runs as `sarathi` chunks instead. AIConfigurator's
// generator writes --enable-mixed-chunk, but its SGLang fit rows (Qwen3-32B on H100, 0.5.1)
// run as the default does: a round's prompts prefill apart from the decodes (TTFT 3-6x and TPOT
// 0.6-0.8x what mixing them gives): only some of its templates write the flag
// (aic_sglang_mixes). Mixed chunks are servesim's `sarathi` rule (a step's prefill chunk and
// decodes within the chunk size).
ServerLaunch sglang_launch(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu) {
  const std::int64_t c = row.concurrency;
  const double mib = gpu.device_memory_bytes() / (1024.0 * 1024.0);
  const bool large = mib >= 160 * 1024;
  const std::optional<SglangLimits> script = sglang_script_limits(row, layout, gpu);
  const std::int64_t chunk = script ? script->chunk : large ? 16384 : 8192;
  const std::int64_t graph_bs = script ? script->running : large || layout.gpus >= 4 ? 512 : 256;
  const auto default_memory = [&] {
    const double reserve = std::max(
        10.0 * 1024, 512 + 1.5 * static_cast<double>(chunk) + 2.0 * static_cast<double>(graph_bs) +
                         static_cast<double>(layout.gpus * row.pp) / 8 * 1024);
    return (mib - reserve) / mib;
  };
  const double memory = script ? script->memory : default_memory();
  const std::int64_t seqs = script ? std::min(c, script->running) : c;
  ServerLaunch l;
  l.graph_mode = "decode_only";
  l.graph_max_tokens = std::min(c, graph_bs);
  const bool mixed = row.collection() == SiliconCollection::kAiConfigurator &&
                     aic_sglang_mixes(row.backend_version);
  const bool chunked = mixed || row.isl > chunk;
  l.scheduler = mixed ? "scheduler:\n  kind: sarathi   # --enable-mixed-chunk\n"
                : row.isl > chunk
                    ? "scheduler:\n  kind: sarathi   # prompts longer than the chunk\n"
                    : "scheduler:\n  kind: vllm   # prefill batches apart from decode batches\n";
  // The `vllm` rule needs its budget to hold a whole sequence (ISL + OSL); a prompt is still
  // never more than the chunk.
  const std::int64_t len = row.isl + row.osl;
  set_limits(l, chunked ? chunk : std::max(chunk, len), seqs, len, memory);
  if (const std::int64_t recv = sglang_recv_interval(row, layout, gpu); recv > 1) {
    l.scheduler += fmt::format("  scheduler_recv_interval: {}\n", recv);
  }
  return l;
}

// TensorRT-LLM (trtllm-serve, PyTorch backend). In-flight batching puts whole context requests
// beside the generation requests of a step (no chunked prefill by default), within
// max_num_tokens (default 8192), and the default capacity policy GUARANTEED_NO_EVICT admits a
// request only with KV for its whole sequence: servesim's `orca` rule. CUDA graphs for
// generation-only batches. KV: free_gpu_memory_fraction of what the weights leave.
// InferenceX's Llama-3.1-70B scripts (70b_fp8_h200_trt_slurm.sh, 70b_fp4_b200_trt_slurm.sh):
// --max_num_tokens 16384, graphs with padding up to batch 1024, kv_cache_config.dtype fp8,
// fraction 0.9; at ISL = OSL = 1024 below TP 8 batch waiting too (batch_wait_max_tokens_ratio
// 0.9, batch_wait_timeout_iters 20: a context request waits up to 20 steps for 90% of the token
// budget to fill). AIConfigurator's generator: max_num_tokens ⌈max batch + ISL + 1500⌉₃₂, graphs
// for every batch up to the max batch, fraction 0.80; the model's KV dtype. InferenceX's DeepSeek
// scripts (dsr1_fp8_b200_trt.sh, dsr1_fp4_b200_trt.sh, dsr1_fp8_h200_trt.sh): --max_num_tokens
// max(8192, ⌈CONC + ISL + 64⌉₆₄) per attention-DP rank; fraction 0.8 on B200 (0.75 at FP8, 8k/1k,
// TP 4) and 0.75 on H200; graphs up to batch CONC on B200 (CONC / 4 from 4 with FP4 attention
// DP), 128 on H200; at FP8 on B200, 1k/1k, from CONC 64, batch waiting 40 steps for 80% of the
// budget. Their attention-DP balancing (attention_dp_config) is not modelled.
ServerLaunch trtllm_launch(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu,
                           const ModelSpec& model, const std::string& precision) {
  const std::int64_t c = row.concurrency;
  const bool generated = row.collection() == SiliconCollection::kAiConfigurator;
  ServerLaunch l;
  l.graph_mode = "decode_only";
  l.graph_max_tokens = generated ? c : std::min<std::int64_t>(c, 1024);
  if (!generated) l.kv_cache_dtype = "fp8";
  const double w = weight_share(row, layout, gpu, model, precision);
  std::int64_t tokens = generated ? ceil32(c + row.isl + 1500) : 16384;
  double fraction = generated ? 0.8 : 0.9;
  const bool deepseek = !generated && row.model_path.find("DeepSeek") != std::string::npos &&
                        (gpu.name == "b200" || gpu.name == "h200");
  if (deepseek) {
    // At least a whole sequence, as servesim's orca rule asks of a budget without chunking
    // (1k/8k rows: 9,236 for the script's 8,192; no step of theirs comes near either).
    tokens =
        std::max<std::int64_t>({8192, (c + row.isl + 64 + 63) / 64 * 64, row.isl + row.osl + 20});
    const bool fp8_8k_tp4 =
        row.precision == "fp8" && row.isl == 8192 && row.osl == 1024 && layout.gpus == 4;
    fraction = gpu.name == "h200" || fp8_8k_tp4 ? 0.75 : 0.8;
    l.graph_max_tokens = gpu.name == "h200"                                  ? 128
                         : row.precision == "fp4" && layout.attention_dp > 1 ? (c < 4 ? c : c / 4)
                                                                             : c;
  }
  l.scheduler = "scheduler:\n  kind: orca   # in-flight batching, whole context requests\n";
  set_limits(l, tokens * layout.attention_dp, c, row.isl + row.osl + 20, w + fraction * (1 - w));
  const bool llama70b = row.model_path.find("Llama-3.1-70B") != std::string::npos;
  const bool delayed = deepseek && gpu.name == "b200" && row.precision == "fp8" &&
                       row.isl == 1024 && row.osl == 1024 && c >= 64;
  if (!generated && llama70b && row.isl == 1024 && row.osl == 1024 && row.tp < 8) {
    l.scheduler += "  batch_wait_timeout_iters: 20\n  batch_wait_max_tokens_ratio: 0.9\n";
  } else if (delayed) {
    l.scheduler += "  batch_wait_timeout_iters: 40\n  batch_wait_max_tokens_ratio: 0.8\n";
  }
  return l;
}

}  // namespace

ServerLaunch server_launch(const SiliconRow& row, const SiliconLayout& layout, const GpuSpec& gpu,
                           const ModelSpec& model, const std::string& precision) {
  ServerLaunch l;
  if (row.backend == "sglang") {
    l = sglang_launch(row, layout, gpu);
  } else if (row.backend == "trtllm") {
    l = trtllm_launch(row, layout, gpu, model, precision);
  } else {
    l = vllm_launch(row, layout, gpu);
  }
  const std::int64_t c = row.concurrency;
  switch (row.collection()) {
    case SiliconCollection::kAiConfigurator:
      // Its generator's aiperf template (bench_run.sh.j2): fixed lengths (--isl-stddev 0),
      // 20 x CONC requests, 2 x CONC warm-ups. Identical closed-loop clients then run in
      // lockstep: each round's prompts prefill together, then decode together.
      l.client = fmt::format(
          "  client: {{max_concurrency: {}, num_prompts: {}, num_warmups: {}}}   # aiperf\n"
          "  lengths: {{kind: random, input_len: {}, output_len: {}, range_ratio: 1}}\n",
          c, 20 * c, 2 * c, row.isl, row.osl);
      break;
    case SiliconCollection::kInferenceX2025:
      // The 2025 scripts' benchmark_serving: 10 x CONC prompts, no --num-warmups.
      l.client = fmt::format(
          "  client: {{max_concurrency: {}, num_prompts: {}, num_warmups: 0}}\n"
          "  lengths: {{kind: random, input_len: {}, output_len: {}, range_ratio: 0.8}}\n",
          c, 10 * c, row.isl, row.osl);
      break;
    case SiliconCollection::kInferenceX:
      // benchmark_lib.sh: 10 x CONC prompts, 2 x CONC warm-ups.
      l.client = fmt::format(
          "  client: {{max_concurrency: {}}}   # 10 x CONC prompts, 2 x CONC warm-ups\n"
          "  lengths: {{kind: random, input_len: {}, output_len: {}, range_ratio: 0.8}}\n",
          c, row.isl, row.osl);
      break;
  }
  return l;
}

}  // namespace servesim::sim2real
