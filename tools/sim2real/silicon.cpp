#include "tools/sim2real/silicon.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "run/simulation.hpp"
#include "sim/config/input_error.hpp"
#include "sim/config/run_config.hpp"
#include "sim/hardware/catalog.hpp"
#include "sim/hardware/memory_planner.hpp"
#include "sim/hardware/replica_spec.hpp"
#include "sim/output/metrics.hpp"
#include "sim/util/csv_reader.hpp"
#include "sim/util/sample_stats.hpp"
#include "tools/sim2real/mlenergy.hpp"
#include "tools/sim2real/replay.hpp"
#include "tools/sim2real/silicon_launch.hpp"

namespace servesim::sim2real {
namespace {

constexpr std::string_view kColumns =
    "id, silicon_data_source, backend, backend_version, model_path, system, precision, mode, isl, "
    "osl, gemm_quant_mode, batch_size, tp_size, pp_size, attention_dp_size, moe_tp_size, "
    "moe_ep_size, "
    "silicon_ttft_ms, silicon_tpot_ms";

// A whole number ≥ 1 in field `i`; `fallback` when the field is empty and `optional`.
std::int64_t count_at(const CsvReader& csv, std::size_t i, bool optional, std::int64_t fallback) {
  const std::string_view f = csv.field(i);
  if (f.empty() && optional) return fallback;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || end != f.data() + f.size() || v < 1) {
    csv.fail_field(i, "a whole number ≥ 1");
  }
  return v;
}

// An expert or attention-DP size: empty or 0 is "not used" (1), as the file writes dense rows.
std::int64_t layout_at(const CsvReader& csv, std::size_t i) {
  if (csv.field(i) == "0") return 1;
  return count_at(csv, i, true, 1);
}

double positive_at(const CsvReader& csv, std::size_t i) {
  const std::string text(csv.field(i));
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0) {
    csv.fail_field(i, "a positive number of milliseconds");
  }
  return v;
}

// silicon_concurrency=N inside the source column; 0 when it is not there.
std::int64_t source_concurrency(std::string_view source) {
  constexpr std::string_view kKey = "silicon_concurrency=";
  const auto at = source.find(kKey);
  if (at == std::string_view::npos) return 0;
  std::int64_t v = 0;
  const char* begin = source.data() + at + kKey.size();
  std::from_chars(begin, source.data() + source.size(), v);
  return v;
}

}  // namespace

std::string silicon_system_gpu(const std::string& system) {
  static const std::map<std::string, std::string> kGpus{
      {"h100_sxm", "h100-sxm"}, {"h200_sxm", "h200"}, {"b200_sxm", "b200"}, {"gb200", "gb200"},
      {"b300_sxm", "b300"},     {"b300", "b300"},     {"gb300", "gb300"}};
  const auto it = kGpus.find(system);
  return it == kGpus.end() ? "" : it->second;
}

int silicon_nvlink_domain(const std::string& gpu) {
  return gpu == "gb200" || gpu == "gb300" ? 72 : 8;
}

std::string silicon_catalog_model(const std::string& path, const std::vector<std::string>& models) {
  if (std::find(models.begin(), models.end(), path) != models.end()) return path;
  std::string name = path.substr(path.find('/') + 1);
  for (const char* suffix : {"-FP8", "-NVFP4", "-FP4"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name.resize(name.size() - s.size());
    }
  }
  for (const auto& m : models) {
    const auto slash = m.find('/');
    if (slash != std::string::npos && m.compare(slash + 1, std::string::npos, name) == 0) return m;
  }
  return "";
}

SiliconCollection SiliconRow::collection() const {
  if (source.starts_with("source_file=/")) return SiliconCollection::kAiConfigurator;
  if (source.starts_with("source_file=")) return SiliconCollection::kInferenceX2025;
  return SiliconCollection::kInferenceX;
}

std::string silicon_weight_format(const SiliconRow& row) {
  const std::string& p = row.precision;
  const std::string& q = row.gemm_quant;
  if (p.empty() || p == "bf16" || p == "fp16") return "bf16";
  if (p == "fp8") return q == "fp8_block" ? "fp8_block" : "fp8";
  // The gpt-oss checkpoints exist in MXFP4 alone (their config.json's quantization_config):
  // the file's nvfp4 on those rows names no format they were served at.
  if (p == "fp4") {
    return q == "mxfp4" || row.model_path.find("gpt-oss") != std::string::npos ? "mxfp4" : "nvfp4";
  }
  if (p == "nvfp4" || p == "mxfp4" || p == "int4") return p;
  return "";
}

std::vector<SiliconRow> read_silicon_file(const std::string& path) {
  CsvReader csv(path, "an InferenceX silicon CSV");
  const auto col = [&](std::string_view name) { return csv.column(name, kColumns); };
  const std::size_t id = col("id"), source = col("silicon_data_source"), backend = col("backend"),
                    version = col("backend_version"), model = col("model_path"),
                    system = col("system"), precision = col("precision"), mode = col("mode"),
                    isl = col("isl"), osl = col("osl"), quant = col("gemm_quant_mode"),
                    batch = col("batch_size"), tp = col("tp_size"), pp = col("pp_size"),
                    adp = col("attention_dp_size"), moe_tp = col("moe_tp_size"),
                    moe_ep = col("moe_ep_size"), ttft = col("silicon_ttft_ms"),
                    tpot = col("silicon_tpot_ms");
  // The pools' columns, all or none: a file of aggregated rows may leave them out.
  static constexpr std::array<std::string_view, 7> kPoolKeys{
      "num_workers",       "batch_size",  "tp_size",    "pp_size",
      "attention_dp_size", "moe_tp_size", "moe_ep_size"};
  const bool pools = csv.has_column("prefill_num_workers") || csv.has_column("decode_num_workers");
  std::array<std::array<std::size_t, 7>, 2> pool_col{};
  if (pools) {
    for (std::size_t p = 0; p < 2; ++p) {
      for (std::size_t k = 0; k < kPoolKeys.size(); ++k) {
        const std::string name = fmt::format("{}_{}", p == 0 ? "prefill" : "decode", kPoolKeys[k]);
        pool_col[p][k] = csv.column(name,
                                    "the prefill_ and decode_ columns of disaggregated rows "
                                    "(num_workers, batch_size, tp_size, pp_size, "
                                    "attention_dp_size, moe_tp_size, moe_ep_size)");
      }
    }
  }
  const auto read_pool = [&](const std::array<std::size_t, 7>& c) {
    SiliconPool pool;
    pool.workers = count_at(csv, c[0], true, 0);
    pool.batch = count_at(csv, c[1], true, 0);
    pool.tp = count_at(csv, c[2], true, 1);
    pool.pp = count_at(csv, c[3], true, 1);
    pool.attention_dp = layout_at(csv, c[4]);
    pool.attention_dp_stated = !csv.field(c[4]).empty();
    pool.moe_tp = layout_at(csv, c[5]);
    pool.moe_ep = layout_at(csv, c[6]);
    return pool;
  };
  std::vector<SiliconRow> rows;
  while (csv.next_row()) {
    SiliconRow r;
    r.id = std::string(csv.field(id));
    r.where = fmt::format("{}:{}", display_path(path), csv.line());
    r.source = std::string(csv.field(source));
    r.backend = std::string(csv.field(backend));
    r.backend_version = std::string(csv.field(version));
    r.model_path = std::string(csv.field(model));
    r.system = std::string(csv.field(system));
    r.precision = std::string(csv.field(precision));
    // The formats the file's rows are served at; another is a typo, not a row to skip.
    static const std::vector<std::string> kPrecisions{"",    "bf16", "fp16",  "fp8",
                                                      "fp4", "int4", "mxfp4", "nvfp4"};
    if (std::find(kPrecisions.begin(), kPrecisions.end(), r.precision) == kPrecisions.end()) {
      csv.fail_field(precision, "bf16, fp16, fp8, fp4, int4, mxfp4, nvfp4 or empty");
    }
    r.gemm_quant = std::string(csv.field(quant));
    r.mode = std::string(csv.field(mode));
    if (r.mode != "agg" && r.mode != "disagg") csv.fail_field(mode, "agg or disagg");
    r.isl = count_at(csv, isl, false, 0);
    r.osl = count_at(csv, osl, false, 0);
    const bool agg = r.mode == "agg";
    // The source's silicon_concurrency= is the client's; an aggregated row's batch_size is the
    // engine's batch per attention-DP rank (dsr1_b200_trtllm_fp4_agg_8192x1024_c128_cfg191:
    // batch_size 2 on 64 ranks, silicon_concurrency=128 as its id says), the client's only
    // where the source states none. 0 is refused.
    const std::int64_t batch_size = agg ? count_at(csv, batch, true, 0) : 0;
    r.concurrency = source_concurrency(csv.field(source));
    if (r.concurrency == 0) r.concurrency = batch_size;
    r.tp = count_at(csv, tp, !agg, 1);
    r.pp = count_at(csv, pp, !agg, 1);
    r.attention_dp = layout_at(csv, adp);
    r.attention_dp_stated = !csv.field(adp).empty();
    r.moe_tp = layout_at(csv, moe_tp);
    r.moe_ep = layout_at(csv, moe_ep);
    if (!agg && pools) {
      r.pools = true;
      r.prefill = read_pool(pool_col[0]);
      r.decode = read_pool(pool_col[1]);
      // A row whose source states no concurrency: its decode batch on every decode rank.
      if (r.concurrency == 0 && r.decode.batch > 0 && r.decode.workers > 0) {
        r.concurrency =
            r.decode.batch * r.decode.workers * silicon_layout(pool_row(r, r.decode)).attention_dp;
      }
    }
    r.ttft_ms = positive_at(csv, ttft);
    r.tpot_ms = positive_at(csv, tpot);
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no rows", display_path(path)));
  return rows;
}

// AIConfigurator's convention (sdk/config.py resolve_moe_parallelism): a stage has tp_size ×
// attention_dp_size GPUs, attention sharded tp_size ways in each of attention_dp_size groups,
// the experts over moe_tp_size × moe_ep_size = the same GPUs. InferenceX's database rows write
// its launch's own keys into these columns instead (tp = GPUs, ep, dp-attn), seen in rows whose
// id names the launch: "…_tp4_ep4_…" reads tp_size 1, attention_dp_size 16, moe 4 × 4, and the
// same launch without dp-attn tp_size 16: the columns hold tp × ep GPUs, moe_tp_size the GPUs
// and moe_ep_size the EP size, and a stated attention_dp_size > 1 is dp-attn (every GPU its own
// attention group, as SGLang --dp-size = tp and TensorRT-LLM enable_attention_dp run it). The
// MiniMax vLLM rows write dp-attn with EP as tp_size = attention_dp_size = the GPUs and
// moe_ep_size their square. Rows that leave attention_dp_size empty and whose expert width is
// a multiple of tp_size are AIConfigurator's vLLM rows: its configurations hold tp_size ×
// attention_dp_size = moe_tp_size × moe_ep_size, so the empty column is that ratio, and its
// generator launches --data-parallel-size with --tensor-parallel-size moe_tp × moe_ep / DP
// (rule_plugin/vllm.rule) = tp_size: that many attention groups. Dense rows
// and rows with no expert columns run tp_size × attention_dp_size GPUs.
SiliconLayout silicon_layout(const SiliconRow& row) {
  SiliconLayout l;
  const std::int64_t dp = row.attention_dp;
  const std::int64_t attn_width = row.tp * dp;
  const std::int64_t moe_width = row.moe_tp * row.moe_ep;
  if (moe_width == 1) {  // a dense row, or an MoE row that states no expert layout
    l.gpus = attn_width;
    l.attention_dp = dp;
  } else if (row.moe_tp > 1 && row.moe_ep > 1 && moe_width == attn_width) {
    l.gpus = row.moe_tp;
    l.ep = row.moe_ep;
    l.attention_dp = dp > 1 ? l.gpus : 1;
  } else if (row.moe_tp == 1 && row.tp > 1 && row.tp == dp && row.moe_ep == attn_width) {
    l.gpus = row.tp;
    l.ep = row.tp;
    l.attention_dp = row.tp;
  } else if (moe_width == attn_width) {
    l.gpus = attn_width;
    l.attention_dp = dp;
    l.ep = row.moe_ep;
  } else if (!row.attention_dp_stated && moe_width % row.tp == 0) {
    l.gpus = moe_width;
    l.attention_dp = moe_width / row.tp;
    l.ep = row.moe_ep;
  } else {
    l.problem = fmt::format(
        "layout: tp_size {} × attention_dp_size {} GPUs do not match moe_tp_size {} × "
        "moe_ep_size {}",
        row.tp, dp, row.moe_tp, row.moe_ep);
  }
  return l;
}

SiliconRow pool_row(const SiliconRow& row, const SiliconPool& pool) {
  SiliconRow r = row;
  r.tp = pool.tp;
  r.pp = pool.pp;
  r.attention_dp = pool.attention_dp;
  r.attention_dp_stated = pool.attention_dp_stated;
  r.moe_tp = pool.moe_tp;
  r.moe_ep = pool.moe_ep;
  return r;
}

namespace {

// What a row runs on once its engine, model, precision and GPU are found in the catalog.
struct RowBasis {
  std::string engine;     // the engine profile
  std::string model;      // the catalog's model
  std::string precision;  // the config's weight format
  std::string gpu;        // the catalog's GPU
  const GpuSpec* gpu_spec = nullptr;
  const ModelSpec* model_spec = nullptr;
  int domain = 8;  // GPUs in one NVLink domain
};

// Why one server of `layout` (a worker of `r`'s columns) cannot run; "" when it can.
std::string layout_problem(const SiliconRow& r, const SiliconLayout& layout, const RowBasis& b) {
  if (!layout.problem.empty()) return layout.problem;
  if (layout.gpus * r.pp > b.domain) {
    return fmt::format(
        "layout: {} GPUs span more than one NVLink domain of {} (tensor and expert parallelism "
        "across nodes are not priced)",
        layout.gpus * r.pp, b.domain);
  }
  if (layout.attention_dp > 1 || layout.ep > 1) {
    const auto groups = static_cast<int>(layout.attention_dp);
    if (std::string why = b.model_spec->ep_problem(static_cast<int>(layout.ep), groups);
        !why.empty()) {
      return "layout: " + why;
    }
  }
  if (std::string why =
          b.model_spec->tp_problem(static_cast<int>(layout.gpus / layout.attention_dp));
      !why.empty()) {
    return "layout: attention TP " + why;
  }
  return "";
}

// Whether a server of `layout` launched as `launch` holds one request of its model length in KV:
// a launch whose weights leave none is a layout servesim prices short of memory (or a launch
// flag it does not know).
bool kv_holds_a_request(const SiliconRow& r, const SiliconLayout& layout, const RowBasis& b,
                        const ServerLaunch& launch) {
  ReplicaSpec replica;
  replica.gpu = b.gpu_spec;
  replica.model = b.model_spec;
  replica.tp = static_cast<int>(layout.gpus);
  replica.pp = static_cast<int>(r.pp);
  replica.attention_dp = static_cast<int>(layout.attention_dp);
  replica.moe_ep = static_cast<int>(layout.ep);
  replica.weights = *precision_named(b.precision);
  replica.kv_dtype_bytes = launch.kv_cache_dtype == "fp8" ? 1.0 : 2.0;
  constexpr std::int32_t kBlock = 16;
  const MemoryPlan memory = plan_kv_memory(replica, launch.memory_fraction, kBlock,
                                           static_cast<std::int32_t>(launch.tokens),
                                           static_cast<std::int32_t>(launch.seqs));
  return memory.num_blocks * kBlock >= launch.max_model_len;
}

// A replica group's layout keys.
std::string layout_keys(const SiliconRow& r, const SiliconLayout& layout, const RowBasis& b,
                        const std::string& kv_cache_dtype) {
  std::string y = fmt::format("gpu: {}, tp: {}, pp: {}, precision: {}, kv_cache_dtype: {}, ", b.gpu,
                              layout.gpus, r.pp, b.precision, kv_cache_dtype);
  if (layout.attention_dp > 1) y += fmt::format("attention_dp: {}, ", layout.attention_dp);
  if (layout.ep > 1) y += fmt::format("ep: {}, ", layout.ep);
  return y;
}

// The workload's client lines: the launch's, or options.prompts_per_seat prompts per seat.
std::string client_lines(const SiliconRow& row, const ServerLaunch& launch,
                         const SiliconOptions& o) {
  if (o.prompts_per_seat <= 0) return launch.client;
  const std::int64_t c = row.concurrency;
  const bool fixed = row.collection() == SiliconCollection::kAiConfigurator;
  return fmt::format(
      "  client: {{max_concurrency: {}, num_prompts: {}, num_warmups: {}}}\n"
      "  lengths: {{kind: random, input_len: {}, output_len: {}, range_ratio: {}}}\n",
      c, o.prompts_per_seat * c, c, row.isl, row.osl, fixed ? "1" : "0.8");
}

std::string config_head(const SiliconRow& row, const RowBasis& b, const SiliconOptions& o) {
  std::string y =
      fmt::format("# Generated by sim2real --silicon from {} ({})\n", row.where, row.id);
  y += fmt::format("name: {}\nseed: {}\nmodel: {}\n", quoted(row.id), o.seed, quoted(b.model));
  return y;
}

SiliconPlan plan_aggregated(const SiliconRow& row, const RowBasis& b, const SiliconOptions& o) {
  const SiliconLayout layout = silicon_layout(row);
  if (std::string why = layout_problem(row, layout, b); !why.empty()) return {"", why};
  const ServerLaunch launch = server_launch(row, layout, *b.gpu_spec, *b.model_spec, b.precision);
  if (!kv_holds_a_request(row, layout, b, launch)) {
    return {"",
            "memory: the weights leave no KV cache for one request at the launch's memory "
            "fraction"};
  }
  std::string y = config_head(row, b, o);
  y += "replicas:\n  - {" + layout_keys(row, layout, b, launch.kv_cache_dtype);
  y += fmt::format("cuda_graph_mode: {}, cuda_graph_max_tokens: {}}}\n", launch.graph_mode,
                   launch.graph_max_tokens);
  if (layout.gpus * row.pp > 8) {
    y += fmt::format("cluster: {{gpus_per_node: {}}}   # one NVLink domain\n", b.domain);
  }
  y += launch.scheduler;
  y += "router: {kind: round_robin}\n";
  y += fmt::format("cost_model: {{kind: analytical, engine: {}}}\n", b.engine);
  y += "workload:\n" + client_lines(row, launch, o);
  return {y, "", layout.gpus * row.pp, b.model};
}

// A disaggregated row: `prefill.workers` prefill and `decode.workers` decode servers, each laid
// out by its pool's columns and launched by its engine's rules for the row (server_launch: KV
// dtype, memory fraction), with the pool's own limits: a prefill server batches whole prompts
// within its engine's prefill budget per attention-DP rank (TensorRT-LLM's context servers
// max_num_tokens 16384 in the Dynamo recipes InferenceX runs, SGLang's chunked-prefill size,
// vLLM's 8192), without CUDA graphs; a decode server holds the row's decode batch per rank, its
// graphs up to that batch. The prompt's KV moves to the decode server with the most free KV over
// NVLink within a GB200 rack, else between 8-GPU nodes over their NICs. Not modelled: SGLang's
// receive skipping and TensorRT-LLM's batch waiting on either side.
SiliconPlan plan_disaggregated(const SiliconRow& row, const RowBasis& b, const SiliconOptions& o) {
  if (!row.pools) return {"", "disaggregated: the file has no prefill_ and decode_ columns"};
  if (row.prefill.workers == 0 || row.decode.workers == 0) {
    return {"",
            "disaggregated: the row states no worker counts (prefill_num_workers, "
            "decode_num_workers empty)"};
  }
  const std::int64_t len = row.isl + row.osl + 20;
  std::string groups;
  std::string client;  // the client's lines, the same from either pool's launch
  std::int64_t gpus = 0;
  for (const bool prefill : {true, false}) {
    const SiliconPool& pool = prefill ? row.prefill : row.decode;
    const char* role = prefill ? "prefill" : "decode";
    const SiliconRow r = pool_row(row, pool);
    const SiliconLayout layout = silicon_layout(r);
    if (std::string why = layout_problem(r, layout, b); !why.empty()) {
      return {"", fmt::format("{} pool {}", role, why)};
    }
    ServerLaunch launch = server_launch(r, layout, *b.gpu_spec, *b.model_spec, b.precision);
    client = client_lines(row, launch, o);
    const std::int64_t ranks = layout.attention_dp;
    std::int64_t per_rank_tokens = 0;
    std::int64_t per_rank_seqs = 0;
    if (prefill) {
      // SGLang's chunk is the server's, shared by its DP ranks.
      const std::int64_t budget = row.backend == "trtllm"   ? 16384
                                  : row.backend == "sglang" ? launch.tokens / ranks
                                                            : 8192;
      per_rank_tokens = std::max(budget, len);
      per_rank_seqs = std::max<std::int64_t>(1, per_rank_tokens / row.isl);
    } else {
      const std::int64_t share = pool.workers * ranks;
      per_rank_seqs = pool.batch > 0 ? pool.batch : (row.concurrency + share - 1) / share;
      per_rank_tokens = std::max(per_rank_seqs, len);
    }
    launch.tokens = per_rank_tokens * ranks;
    launch.seqs = per_rank_seqs * ranks;
    launch.max_model_len = len;
    if (!kv_holds_a_request(r, layout, b, launch)) {
      return {"", fmt::format("{} pool memory: the weights leave no KV cache for one request at "
                              "the launch's memory fraction",
                              role)};
    }
    groups += "  - {" + layout_keys(r, layout, b, launch.kv_cache_dtype);
    groups += fmt::format("count: {}, role: {}, ", pool.workers, role);
    groups += prefill ? std::string("cuda_graphs: false")
                      : fmt::format("cuda_graph_mode: decode_only, cuda_graph_max_tokens: {}",
                                    launch.seqs);
    groups += fmt::format(
        ",\n     scheduler: {{max_num_batched_tokens: {}, max_num_seqs: {}, "
        "gpu_memory_utilization: {:.4f}}}}}\n",
        launch.tokens, launch.seqs, launch.memory_fraction);
    gpus += pool.workers * layout.gpus * r.pp;
  }
  if (gpus > kMaxDisaggregatedGpus) {
    return {"", fmt::format("disaggregated: {} GPUs, more than the {} a run may have", gpus,
                            kMaxDisaggregatedGpus)};
  }
  std::string y = config_head(row, b, o);
  y += "replicas:\n" + groups;
  if (b.domain > 8)
    y += fmt::format("cluster: {{gpus_per_node: {}}}   # one NVLink domain\n", b.domain);
  y += fmt::format(
      "scheduler:\n  kind: vllm   # each server batches one kind of work\n  max_model_len: {}\n"
      "  enable_prefix_caching: false\n",
      len);
  y += "router: {kind: round_robin}\n";
  y += fmt::format("cost_model: {{kind: analytical, engine: {}}}\n", b.engine);
  y += "workload:\n" + client;
  return {y, "", gpus, b.model};
}

}  // namespace

SiliconPlan plan_silicon_row(const SiliconRow& row, Catalog& catalog, const SiliconOptions& o) {
  if (row.concurrency <= 0) return {"", "the row states no client concurrency"};
  const auto engine = o.engines.find(row.backend);
  if (engine == o.engines.end()) {
    return {"", fmt::format("no engine profile for {}", row.backend)};
  }
  RowBasis b;
  b.engine = engine->second;
  // The model first: a row of a model servesim lacks is that, whatever its format.
  b.model = silicon_catalog_model(row.model_path, catalog.model_names());
  if (b.model.empty()) return {"", fmt::format("model {} is not in the catalog", row.model_path)};
  if (row.mode == "agg") {
    if (const SiliconLayout layout = silicon_layout(row); !layout.problem.empty()) {
      return {"", layout.problem};
    }
  }
  b.precision = silicon_weight_format(row);
  if (b.precision.empty()) {
    return {"", fmt::format("precision {} with GEMM quantization '{}' is not priced", row.precision,
                            row.gemm_quant)};
  }
  const std::vector<std::string> gpus = catalog.gpu_names();
  b.gpu = silicon_system_gpu(row.system);
  if (b.gpu.empty() || std::find(gpus.begin(), gpus.end(), b.gpu) == gpus.end()) {
    return {"", fmt::format("no hardware file for system {}", row.system)};
  }
  const ConfigNode where = ConfigNode::parse("{}", row.where);
  b.gpu_spec = &catalog.gpu(b.gpu, where);
  if (std::string why = b.gpu_spec->precision_problem(*precision_named(b.precision));
      !why.empty()) {
    return {"", why};
  }
  b.model_spec = &catalog.model(b.model, where);
  // A replica within one NVLink domain is priced as within a node.
  b.domain = silicon_nvlink_domain(b.gpu);
  return row.mode == "agg" ? plan_aggregated(row, b, o) : plan_disaggregated(row, b, o);
}

std::vector<SiliconResult> replay_silicon_rows(const std::vector<SiliconRow>& rows,
                                               const SiliconOptions& options, RunCache* cache) {
  Catalog catalog(Catalog::default_dirs());
  // Rows of one engine share its cost model, and rows of one layout its step tables.
  RunCache own;
  if (!cache) cache = &own;
  std::vector<SiliconResult> out(rows.size());
  std::vector<std::exception_ptr> errors(rows.size());
  tbb::parallel_for(std::size_t{0}, rows.size(), [&](std::size_t i) {
    SiliconResult& r = out[i];
    r.row = &rows[i];
    r.plan = plan_silicon_row(rows[i], catalog, options);
    if (!r.plan.not_run.empty()) return;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const ConfigNode root = ConfigNode::parse(r.plan.config_yaml, rows[i].where);
      Simulation sim(RunConfig::parse(root, options.seed), cache);
      MetricsCollector metrics = sim.metrics(sim.cost_model());
      const EngineTotals totals = sim.run({.observers = {&metrics}});
      const nlohmann::json s = metrics.summary(totals, sim.fleet());
      r.ttft_ms = s["client"]["mean_ttft_ms"].get<double>();
      r.tpot_ms = s["client"]["mean_tpot_ms"].get<double>();
      r.preemptions = totals.preemptions;
    } catch (const InputError& e) {
      errors[i] = std::make_exception_ptr(
          InputError(fmt::format("{} ({}): {}", rows[i].where, rows[i].id, e.what())));
    } catch (const std::exception& e) {
      // A fault of servesim's own: named with the row and the config that reproduces it.
      errors[i] = std::make_exception_ptr(
          std::runtime_error(fmt::format("{} ({}): {}\nits config:\n{}", rows[i].where, rows[i].id,
                                         e.what(), r.plan.config_yaml)));
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

}  // namespace servesim::sim2real
