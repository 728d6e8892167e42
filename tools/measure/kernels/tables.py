"""Pure-Python tables (no torch needed): models, grids, CSV layout, and the helpers on them."""
import math
import statistics

OPS = [
    "emb",
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
]
STATS = ["min", "max", "mean", "median", "std"]
META_COLS = [
    "n_head",
    "n_kv_head",
    "n_embd",
    "n_expanded_embd",
    "vocab_size",
    "use_gated_mlp",
    "num_tokens",
    "num_tensor_parallel_workers",
]
MLP_COLUMNS = ["time_stats.%s.%s" % (op, s) for op in OPS for s in STATS] + META_COLS

# Architecture per each model's Hugging Face config.json (as in configs/models/).  vocab_size is
# Vidur's (Llama-2 and CodeLlama-34b inherit Vidur's default 32768; HF says 32000) so that rows
# key like Vidur's.
MODELS = [
    dict(name="meta-llama/Meta-Llama-3-8B", n_head=32, n_kv_head=8, n_embd=4096,
         n_expanded_embd=14336, vocab_size=128256, gated=True, tps=[1, 2, 4]),
    dict(name="meta-llama/Llama-2-7b-hf", n_head=32, n_kv_head=32, n_embd=4096,
         n_expanded_embd=11008, vocab_size=32768, gated=True, tps=[1, 2, 4]),
    dict(name="meta-llama/Llama-2-70b-hf", n_head=64, n_kv_head=8, n_embd=8192,
         n_expanded_embd=28672, vocab_size=32768, gated=True, tps=[2, 4, 8]),
    dict(name="codellama/CodeLlama-34b-Instruct-hf", n_head=64, n_kv_head=8, n_embd=8192,
         n_expanded_embd=22016, vocab_size=32768, gated=True, tps=[2, 4, 8]),
]

# A subset of Vidur's num_tokens grid (all of these up to 4096 are in it) plus 8192.
TOKENS = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 320, 384, 448, 512, 640, 768, 896,
          1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 8192]
DRY_TOKENS = [1, 3, 16]

ATTN_NQ, ATTN_NKV, ATTN_HD = 32, 8, 128  # Llama-3-8B at TP 1
PREFILL_CHUNKS = [128, 256, 512, 1024, 2048, 4096, 8192]
PREFILL_CONTEXTS = [0, 512, 2048, 8192]
DECODE_BATCHES = [1, 8, 32, 128, 256]
DECODE_CONTEXTS = [128, 512, 1024, 2048, 4096]
ATTN_COLUMNS = ["kind", "batch", "chunk_tokens", "context_before", "n_q_heads", "n_kv_heads",
                "head_dim", "time_ms_median", "time_ms_min", "variant"]

GEMM_COLUMNS = ["name", "M", "N", "K", "weights", "reps", "time_ms_median", "time_ms_min",
                "tflops_median", "tbytes_per_s_median", "sm_clock_mhz_during", "power_w_during",
                "sm_clock_mhz_after"]

SMI_QUERY = "clocks.sm,power.draw,temperature.gpu,clocks.max.sm,power.limit"


def model_shapes(m, tp):
    """Per-GPU shapes as Vidur shards them at TP degree tp."""
    hd = m["n_embd"] // m["n_head"]
    nq = m["n_head"] // tp
    nkv = max(1, m["n_kv_head"] // tp)
    inter = m["n_expanded_embd"] // tp
    return dict(
        head_dim=hd,
        n_q=nq,
        n_kv=nkv,
        hidden=m["n_embd"],
        qkv_out=(m["n_head"] + 2 * m["n_kv_head"]) * hd // tp,
        attn_out_in=m["n_head"] * hd // tp,
        up_out=(2 if m["gated"] else 1) * inter,
        inter=inter,
        vocab_rows=m["vocab_size"] // tp,
    )


def summarize(times_ms):
    """Vidur's five statistics (std is the population std, as numpy's default)."""
    return dict(
        min=min(times_ms),
        max=max(times_ms),
        mean=statistics.fmean(times_ms),
        median=statistics.median(times_ms),
        std=statistics.pstdev(times_ms),
    )


def mlp_row(m, tp, num_tokens, stats_by_op):
    row = {}
    for op in OPS:
        for s in STATS:
            row["time_stats.%s.%s" % (op, s)] = stats_by_op[op][s]
    row.update(n_head=m["n_head"], n_kv_head=m["n_kv_head"], n_embd=m["n_embd"],
               n_expanded_embd=m["n_expanded_embd"], vocab_size=m["vocab_size"],
               use_gated_mlp="True" if m["gated"] else "False", num_tokens=num_tokens,
               num_tensor_parallel_workers=tp)
    return [row[c] for c in MLP_COLUMNS]


def mlp_filename(model_name):
    return "mlp__" + model_name.replace("/", "__") + ".csv"


def rotation_copies(weight_bytes, l2_bytes, factor=3, cap=64):
    """Weight copies to cycle through so that the bytes cycled are >= factor x L2 (capped)."""
    if weight_bytes <= 0:
        return 1
    return min(cap, max(1, int(math.ceil(factor * l2_bytes / float(weight_bytes)))))


def reps_for(est_ms, min_reps=20, max_reps=40, target_ms=80.0):
    if not est_ms or est_ms <= 0 or math.isnan(est_ms):
        return max_reps
    return int(min(max_reps, max(min_reps, target_ms / est_ms)))

