#!/usr/bin/env python3
"""Measure ground-truth kernel times on one GPU (written for the H200) for cost-model validation.

Outputs (all under --out, flat, so that a lent device machine can return them):
  mlp__<org>__<model>.csv  Vidur-format per-op table (same columns as Vidur's mlp.csv, ms)
  attention.csv            prefill (flash, causal) and decode SDPA attention times
  gemm_sweep.csv           large bf16 GEMMs (TFLOP/s, SM clock) and hot-vs-rotated small-M GEMMs
  meta.json                versions, device properties, nvidia-smi readings, section wall times

Every section and every cell is independent: an error is logged and the run continues.  Rows are
written (and flushed) as soon as they are measured, so a run killed at its time limit still
leaves data.  See README.md beside this file for the method and the caveats.

--dry-run runs the same code on the CPU with tiny grids (torch only, no Triton, no CUDA) to
check the bookkeeping; its numbers mean nothing.
"""

import argparse
import csv
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

# ----------------------------------------------------------------------------------------------
# Pure-Python tables (no torch needed): models, grids, CSV layout.

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

# Architecture per ../shared/reference/models.yaml.  vocab_size is Vidur's (Llama-2 and
# CodeLlama-34b inherit Vidur's default 32768; HF says 32000) so that rows key like Vidur's.
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


# ----------------------------------------------------------------------------------------------
# Logging and incremental output.

T0 = time.time()


def log(msg):
    print("[%7.1fs] %s" % (time.time() - T0, msg), flush=True)


class CsvSink:
    def __init__(self, path, columns):
        self.path = path
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(columns)
        self.f.flush()
        self.rows = 0

    def add(self, values):
        self.w.writerow(values)
        self.f.flush()
        self.rows += 1

    def close(self):
        self.f.close()


class Meta:
    def __init__(self, path):
        self.path = path
        self.d = dict(started_unix=T0, started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                  time.gmtime(T0)),
                      sections={}, smi=[], errors=[], notes=[])

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, sort_keys=True, default=str)
        os.replace(tmp, self.path)

    def error(self, where, exc):
        msg = "%s: %s: %s" % (where, type(exc).__name__, exc)
        log("ERROR " + msg)
        tb = traceback.format_exc()
        print(tb, flush=True)
        self.d["errors"].append(dict(where=where, error=msg, t=time.time() - T0))


def nvidia_smi(tag, meta):
    rec = dict(tag=tag, t=round(time.time() - T0, 2))
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + SMI_QUERY, "--format=csv"],
                             capture_output=True, text=True, timeout=20)
        lines = [ln for ln in out.stdout.strip().splitlines() if ln.strip()]
        rec["raw"] = lines
        if len(lines) >= 2:
            rec.update(dict(zip(SMI_QUERY.split(","), [v.strip() for v in lines[1].split(",")])))
    except Exception as exc:  # noqa: BLE001 - nvidia-smi absent in a dry run
        rec["error"] = "%s: %s" % (type(exc).__name__, exc)
    meta.d["smi"].append(rec)
    log("smi %-28s %s" % (tag, rec.get("raw", [rec.get("error")])[-1]))
    return rec


def run_section(name, fn, meta, deadline):
    if time.time() > deadline:
        log("SKIP section %s: past the deadline" % name)
        meta.d["sections"][name] = dict(skipped="deadline")
        meta.save()
        return
    log("=== section %s" % name)
    nvidia_smi(name + ":before", meta)
    t = time.time()
    try:
        fn()
        ok = True
    except Exception as exc:  # noqa: BLE001 - each section is independent
        meta.error("section " + name, exc)
        ok = False
    wall = time.time() - t
    nvidia_smi(name + ":after", meta)
    meta.d["sections"][name] = dict(wall_s=round(wall, 3), ok=ok)
    meta.save()
    log("=== section %s done in %.1f s" % (name, wall))


# ----------------------------------------------------------------------------------------------
# Everything below needs torch (and, on the GPU, Triton).


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder (flat)")
    ap.add_argument("--budget-s", type=float, default=270.0,
                    help="stop starting new cells after this many seconds")
    ap.add_argument("--dry-run", action="store_true", help="CPU bookkeeping check, tiny grids")
    ap.add_argument("--sections", default="calib,gemm,attention,mlp")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    deadline = T0 + args.budget_s
    meta = Meta(os.path.join(args.out, "meta.json"))
    meta.d["argv"] = sys.argv
    meta.d["python"] = sys.version
    meta.d["host"] = platform.node()
    meta.save()

    import torch
    import torch.nn.functional as F

    dry = args.dry_run
    dev = "cpu" if dry else "cuda"
    dtype = torch.bfloat16 if not dry else torch.float32
    meta.d["dry_run"] = dry
    meta.d["torch"] = torch.__version__
    meta.d["torch_cuda"] = getattr(torch.version, "cuda", None)

    triton = tl = None
    if not dry:
        try:
            import triton  # noqa: F811
            import triton.language as tl  # noqa: F811
            meta.d["triton"] = triton.__version__
        except Exception as exc:  # noqa: BLE001
            meta.error("import triton", exc)

    l2_bytes = 60 * 1024 * 1024
    if not dry:
        try:
            p = torch.cuda.get_device_properties(0)
            l2_bytes = int(getattr(p, "L2_cache_size", l2_bytes))
            meta.d["device"] = dict(name=p.name, sm_count=p.multi_processor_count,
                                    l2_bytes=l2_bytes, total_memory=p.total_memory,
                                    capability="%d.%d" % (p.major, p.minor))
            meta.d["cudnn"] = torch.backends.cudnn.version()
            meta.d["matmul_allow_bf16_reduced_precision_reduction"] = \
                torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name,memory.total",
                                  "--format=csv,noheader"], capture_output=True, text=True,
                                 timeout=20)
            meta.d["driver"] = out.stdout.strip()
        except Exception as exc:  # noqa: BLE001
            meta.error("device properties", exc)
    meta.save()
    log("torch %s cuda %s triton %s device %s" % (torch.__version__, meta.d.get("torch_cuda"),
                                                  meta.d.get("triton"), meta.d.get("device")))

    # NVML for clock/power probes while the GPU is busy (fast); nvidia-smi otherwise.
    nvml = {}
    if not dry:
        try:
            import pynvml
            pynvml.nvmlInit()
            nvml["h"] = pynvml.nvmlDeviceGetHandleByIndex(0)
            nvml["m"] = pynvml
        except Exception as exc:  # noqa: BLE001
            meta.error("pynvml", exc)

    def probe():
        if "m" not in nvml:
            return (float("nan"), float("nan"))
        try:
            m, h = nvml["m"], nvml["h"]
            return (float(m.nvmlDeviceGetClockInfo(h, m.NVML_CLOCK_SM)),
                    m.nvmlDeviceGetPowerUsage(h) / 1000.0)
        except Exception:  # noqa: BLE001
            return (float("nan"), float("nan"))

    # ------------------------------------------------------------------------------------------
    # Timer.  GPU: one CUDA event pair per rep, all reps enqueued behind a spin kernel
    # (torch.cuda._sleep) so that host launch cost does not leak into small-op times.  A cell is
    # clean when the GPU had not yet reached the first rep's start event once the host had
    # enqueued every rep (then all reps ran back to back from the queue); otherwise it is
    # measured again behind a 4x longer spin, up to twice, and counted in meta.json.
    sleep_ok = [not dry and hasattr(torch.cuda, "_sleep")]
    SLEEP_CYCLES_PER_REP = 200_000  # ~100 us of host time per rep at ~2 GHz
    tstats = dict(cells=0, retries=0, dirty=[])

    def measure(fn, min_reps=20, max_reps=40, target_ms=80.0, warmup=3, on_enqueued=None,
                tag=""):
        """fn(i) runs rep i. Returns (times_ms, probe result or None)."""
        if dry:
            for i in range(warmup):
                fn(i)
            ts = []
            for i in range(min_reps):
                t = time.perf_counter()
                fn(i)
                ts.append((time.perf_counter() - t) * 1e3)
            return ts, (on_enqueued() if on_enqueued else None)
        for i in range(warmup):
            fn(i)
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn(warmup)
        e.record()
        e.synchronize()
        est = s.elapsed_time(e)
        reps = reps_for(est, min_reps, max_reps, target_ms)
        tstats["cells"] += 1
        mult = 1
        for attempt in range(3):
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            gc.disable()
            try:
                if sleep_ok[0]:
                    try:
                        torch.cuda._sleep(int(reps * SLEEP_CYCLES_PER_REP * mult))
                    except Exception:  # noqa: BLE001
                        sleep_ok[0] = False
                for i in range(reps):
                    starts[i].record()
                    fn(i)
                    ends[i].record()
                clean = not starts[0].query()  # GPU still behind the host: no launch gaps
                pr = on_enqueued() if on_enqueued else None
            finally:
                gc.enable()
            torch.cuda.synchronize()
            ts = [a.elapsed_time(b) for a, b in zip(starts, ends)]
            if clean or not sleep_ok[0]:
                break
            tstats["retries"] += 1
            mult *= 4
        if not clean:
            tstats["dirty"].append(tag)
        return ts, pr

    def kernel_names(tag, fn):
        """Record once which CUDA kernels fn launches (torch.profiler), for the README."""
        if dry:
            return
        try:
            from torch.profiler import ProfilerActivity, profile
            fn(0)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn(0)
                torch.cuda.synchronize()
            names = sorted({e.key for e in prof.key_averages()})
            meta.d.setdefault("kernel_names", {})[tag] = [n[:160] for n in names[:12]]
            log("kernels %s: %s" % (tag, "; ".join(n[:80] for n in names[:4])))
        except Exception as exc:  # noqa: BLE001
            meta.error("kernel_names " + tag, exc)

    def randn(*shape):
        return torch.randn(*shape, device=dev, dtype=dtype)

    def free():
        if not dry:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    # ------------------------------------------------------------------------------------------
    # Light kernels: fused Triton versions (vLLM-like) and torch fallbacks.
    kern = {}
    if tl is not None:
        try:
            @triton.jit
            def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BLOCK)
                mask = cols < N
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
                var = tl.sum(x * x, axis=0) / N
                rstd = 1.0 / tl.sqrt(var + eps)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
                y = x * rstd * w
                tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

            @triton.jit
            def _silu_mul_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
                t = tl.program_id(0)
                pid = tl.program_id(1)
                offs = pid * BLOCK + tl.arange(0, BLOCK)
                m = offs < D
                g = tl.load(x_ptr + t * 2 * D + offs, mask=m, other=0.0).to(tl.float32)
                u = tl.load(x_ptr + t * 2 * D + D + offs, mask=m, other=0.0).to(tl.float32)
                y = g / (1.0 + tl.exp(-g)) * u
                tl.store(y_ptr + t * D + offs, y.to(y_ptr.dtype.element_ty), mask=m)

            @triton.jit
            def _rope_neox_kernel(qkv_ptr, pos_ptr, cos_ptr, sin_ptr, row_stride, n_heads,
                                  HALF: tl.constexpr, BLOCK_H: tl.constexpr):
                # In place on the first n_heads heads (q heads then k heads) of one token row.
                t = tl.program_id(0)
                hb = tl.program_id(1)
                pos = tl.load(pos_ptr + t)
                d = tl.arange(0, HALF)
                h = hb * BLOCK_H + tl.arange(0, BLOCK_H)
                m = (h[:, None] < n_heads) & (d[None, :] < HALF)
                c = tl.load(cos_ptr + pos * HALF + d)[None, :]
                s = tl.load(sin_ptr + pos * HALF + d)[None, :]
                base = qkv_ptr + t * row_stride + h[:, None] * (2 * HALF) + d[None, :]
                x1 = tl.load(base, mask=m, other=0.0).to(tl.float32)
                x2 = tl.load(base + HALF, mask=m, other=0.0).to(tl.float32)
                tl.store(base, (x1 * c - x2 * s).to(qkv_ptr.dtype.element_ty), mask=m)
                tl.store(base + HALF, (x2 * c + x1 * s).to(qkv_ptr.dtype.element_ty), mask=m)

            def rmsnorm_triton(x, w, eps=1e-5):
                T, N = x.shape
                y = torch.empty_like(x)
                block = triton.next_power_of_2(N)
                _rmsnorm_kernel[(T,)](x, w, y, x.stride(0), N, eps, BLOCK=block,
                                      num_warps=8 if block <= 4096 else 16)
                return y

            def silu_mul_triton(x):
                T, D2 = x.shape
                D = D2 // 2
                y = torch.empty((T, D), device=x.device, dtype=x.dtype)
                _silu_mul_kernel[(T, triton.cdiv(D, 1024))](x, y, D, BLOCK=1024, num_warps=4)
                return y

            def rope_triton(qkv, pos, cos, sin, n_rot_heads, head_dim):
                T = qkv.shape[0]
                bh = 8
                _rope_neox_kernel[(T, triton.cdiv(n_rot_heads, bh))](
                    qkv, pos, cos, sin, qkv.stride(0), n_rot_heads, HALF=head_dim // 2,
                    BLOCK_H=bh, num_warps=4)
                return qkv

            kern.update(rmsnorm=rmsnorm_triton, silu_mul=silu_mul_triton, rope=rope_triton)
        except Exception as exc:  # noqa: BLE001
            meta.error("define triton kernels", exc)

    def rmsnorm_torch(x, w, eps=1e-5):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)

    def silu_mul_torch(x):
        d = x.shape[1] // 2
        return F.silu(x[:, :d]) * x[:, d:]

    def rope_torch(qkv, pos, cos, sin, n_rot_heads, head_dim):
        T = qkv.shape[0]
        half = head_dim // 2
        v = qkv[:, : n_rot_heads * head_dim].view(T, n_rot_heads, head_dim)
        c = cos[pos].unsqueeze(1)
        s = sin[pos].unsqueeze(1)
        x1 = v[..., :half].float()
        x2 = v[..., half:].float()
        o1 = x1 * c - x2 * s
        o2 = x2 * c + x1 * s
        v[..., :half] = o1.to(qkv.dtype)
        v[..., half:] = o2.to(qkv.dtype)
        return qkv

    impl = dict(rmsnorm=rmsnorm_torch, silu_mul=silu_mul_torch, rope=rope_torch)
    meta.d["light_kernel_impl"] = dict(rmsnorm="torch", silu_mul="torch", rope="torch")

    def rel_err(a, b):
        a = a.double()
        b = b.double()
        return float((a - b).norm() / b.norm().clamp_min(1e-30))

    def self_check():
        """Check each Triton kernel against its torch reference; adopt it when it agrees."""
        tol = 2e-2
        for name in ("rmsnorm", "silu_mul", "rope"):
            if name not in kern:
                continue
            try:
                if name == "rmsnorm":
                    x = randn(37, 4096)
                    w = randn(4096)
                    err = rel_err(kern[name](x, w), rmsnorm_torch(x, w))
                elif name == "silu_mul":
                    x = randn(37, 2 * 1792)
                    err = rel_err(kern[name](x), silu_mul_torch(x))
                else:
                    hd, nh, extra = 128, 40, 8
                    qkv = randn(37, (nh + extra) * hd)
                    pos = torch.randint(0, 4096, (37,), device=dev)
                    ang = torch.rand(4096, hd // 2, device=dev, dtype=torch.float32) * 6.28
                    cos, sin = ang.cos(), ang.sin()
                    a = kern[name](qkv.clone(), pos, cos, sin, nh, hd)
                    b = rope_torch(qkv.clone(), pos, cos, sin, nh, hd)
                    err = rel_err(a, b)
                    # the heads past n_rot_heads (the v heads) must be untouched
                    untouched = bool(torch.equal(a[:, nh * hd:], qkv[:, nh * hd:]))
                    meta.d.setdefault("self_check", {})["rope_v_untouched"] = untouched
                    if not untouched:
                        err = float("inf")
                meta.d.setdefault("self_check", {})[name + "_rel_err"] = err
                if err < tol:
                    impl[name] = kern[name]
                    meta.d["light_kernel_impl"][name] = "triton"
                log("self-check %-8s rel err %.2e -> %s" % (name, err,
                                                             meta.d["light_kernel_impl"][name]))
            except Exception as exc:  # noqa: BLE001
                meta.error("self-check " + name, exc)

    # ------------------------------------------------------------------------------------------
    def section_calib():
        self_check()
        if dry:
            return
        x = randn(1)
        ts, _ = measure(lambda i: None, min_reps=40)
        meta.d["event_pair_empty_ms_median"] = statistics.median(ts)
        ts, _ = measure(lambda i: torch.add(x, x), min_reps=40)
        meta.d["tiny_add_ms_median"] = statistics.median(ts)
        # Copy bandwidth ceiling: 2 GiB device-to-device.
        a = torch.empty(1 << 30, device=dev, dtype=torch.int16).random_()
        b = torch.empty_like(a)
        ts, _ = measure(lambda i: b.copy_(a), min_reps=20, max_reps=20)
        meta.d["copy_2GiB_ms_median"] = statistics.median(ts)
        meta.d["copy_TBps_read_plus_write"] = 2 * a.numel() * 2 / (statistics.median(ts) * 1e-3) / 1e12
        log("calib: empty event pair %.4f ms, tiny add %.4f ms, copy %.2f TB/s" % (
            meta.d["event_pair_empty_ms_median"], meta.d["tiny_add_ms_median"],
            meta.d["copy_TBps_read_plus_write"]))
        del a, b
        free()

    # ------------------------------------------------------------------------------------------
    def section_gemm():
        sink = CsvSink(os.path.join(args.out, "gemm_sweep.csv"), GEMM_COLUMNS)
        cases = []
        big = [("square_4096", 4096, 4096, 4096), ("square_8192", 8192, 8192, 8192),
               ("square_16384", 16384, 16384, 16384),
               ("l3_8b_qkv", 16384, 6144, 4096), ("l3_8b_o", 16384, 4096, 4096),
               ("l3_8b_gate_up", 16384, 28672, 4096), ("l3_8b_down", 16384, 4096, 14336),
               ("l2_70b_tp2_qkv", 16384, 5120, 8192), ("l2_70b_tp2_gate_up", 16384, 28672, 8192),
               ("l2_70b_tp2_down", 16384, 8192, 14336)]
        if dry:
            big = [("square_64", 64, 64, 64)]
        for name, M, N, K in big:
            cases.append((name, M, N, K, "hot"))
        small_ms = [1, 16, 64, 256] if not dry else [1, 4]
        # weights of 8 MB, 58 MB and 117 MB against a 60 MB L2: hot vs rotated copies
        for name, N, K in (("l3_8b_tp4_o", 4096, 1024), ("l3_8b_tp4_gate_up", 7168, 4096),
                           ("l3_8b_tp1_down", 4096, 14336)):
            if dry:
                N, K = 128, 64
            for M in small_ms:
                for wmode in ("hot", "rotated"):
                    cases.append((name, M, N, K, wmode))
        for name, M, N, K, wmode in cases:
            if time.time() > deadline:
                log("gemm: deadline, skipping the rest")
                break
            try:
                x = randn(M, K)
                ncopy = 1 if wmode == "hot" else rotation_copies(N * K * 2, l2_bytes)
                ws = [randn(N, K) for _ in range(ncopy)]
                ts, pr = measure(lambda i: F.linear(x, ws[i % ncopy]), on_enqueued=probe,
                                 tag="gemm %s M=%d %s" % (name, M, wmode))
                after = probe()[0]
                med = statistics.median(ts)
                flops = 2.0 * M * N * K
                nbytes = 2.0 * (M * K + N * K + M * N)
                sink.add([name, M, N, K, wmode if wmode == "hot" else "rotated_x%d" % ncopy,
                          len(ts), med, min(ts), flops / (med * 1e-3) / 1e12,
                          nbytes / (med * 1e-3) / 1e12, pr[0], pr[1], after])
                log("gemm %-20s M=%-5d N=%-5d K=%-5d %-8s %.4f ms %.1f TFLOP/s clk %s/%s MHz" % (
                    name, M, N, K, wmode, med, flops / (med * 1e-3) / 1e12, pr[0], after))
                del x, ws
            except Exception as exc:  # noqa: BLE001
                meta.error("gemm %s M=%d %s" % (name, M, wmode), exc)
            free()
        sink.close()

    # ------------------------------------------------------------------------------------------
    def section_attention():
        sink = CsvSink(os.path.join(args.out, "attention.csv"), ATTN_COLUMNS)
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is None:
            raise RuntimeError("torch has no scaled_dot_product_attention")
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except Exception as exc:  # noqa: BLE001
            meta.error("import sdpa_kernel", exc)
            SDPBackend = sdpa_kernel = None
        try:
            from torch.nn.attention.bias import causal_lower_right
        except Exception as exc:  # noqa: BLE001
            meta.error("import causal_lower_right", exc)
            causal_lower_right = None

        nq, nkv, hd = ATTN_NQ, ATTN_NKV, ATTN_HD
        rep = nq // nkv

        def backend_ctx(b):
            if sdpa_kernel is None or b is None:
                import contextlib
                return contextlib.nullcontext()
            return sdpa_kernel([getattr(SDPBackend, b)])

        # (label, backend, gqa native?)  tried in order; the first that runs is kept per kind
        variants = [("flash+gqa", "FLASH_ATTENTION", True),
                    ("flash+expanded_kv", "FLASH_ATTENTION", False),
                    ("efficient+expanded_kv", "EFFICIENT_ATTENTION", False),
                    ("default+expanded_kv", None, False)]
        chosen = {}

        def run_cell(kind, q, k, v, mask, causal):
            order = variants if kind not in chosen else [chosen[kind]]
            last = None
            for var in order:
                label, backend, gqa = var
                try:
                    if gqa:
                        kk, vv = k, v
                        kw = dict(enable_gqa=True)
                    else:
                        kk = k.repeat_interleave(rep, dim=1)
                        vv = v.repeat_interleave(rep, dim=1)
                        kw = {}
                    if mask is not None:
                        kw["attn_mask"] = mask
                    else:
                        kw["is_causal"] = causal
                    with backend_ctx(backend):
                        sdpa(q, kk, vv, **kw)  # probe: raises if this variant cannot run
                        ts, _ = measure(lambda i: sdpa(q, kk, vv, **kw),
                                        tag="attention %s %s" % (kind, tuple(q.shape)))
                    if kind not in chosen:
                        chosen[kind] = var
                        meta.d.setdefault("attention_variant", {})[kind] = label
                        log("attention %s uses %s" % (kind, label))
                        with backend_ctx(backend):
                            kernel_names("attention " + kind, lambda i: sdpa(q, kk, vv, **kw))
                    return ts, label
                except Exception as exc:  # noqa: BLE001
                    last = exc
                    if kind in chosen:
                        raise
                    log("attention %s: variant %s failed: %s" % (kind, label,
                                                                  str(exc).splitlines()[0][:200]))
            raise RuntimeError("no SDPA variant ran: %s" % last)

        chunks = PREFILL_CHUNKS if not dry else [16, 32]
        ctxs = PREFILL_CONTEXTS if not dry else [0, 8]
        for chunk in chunks:
            for ctx in ctxs:
                if time.time() > deadline:
                    break
                if chunk + ctx > 16384:
                    continue
                if ctx > 0 and causal_lower_right is None:
                    continue
                try:
                    q = randn(1, nq, chunk, hd)
                    k = randn(1, nkv, ctx + chunk, hd)
                    v = randn(1, nkv, ctx + chunk, hd)
                    if ctx == 0:
                        kind, mask = "prefill_square", None
                    else:
                        kind, mask = "prefill_offset", causal_lower_right(chunk, ctx + chunk)
                    ts, label = run_cell(kind, q, k, v, mask, True)
                    sink.add(["prefill", 1, chunk, ctx, nq, nkv, hd, statistics.median(ts),
                              min(ts), label])
                    log("attn prefill chunk=%-5d ctx=%-5d %.4f ms" % (chunk, ctx,
                                                                     statistics.median(ts)))
                    del q, k, v
                except Exception as exc:  # noqa: BLE001
                    meta.error("attention prefill chunk=%d ctx=%d" % (chunk, ctx), exc)
                free()

        batches = DECODE_BATCHES if not dry else [1, 4]
        lens = DECODE_CONTEXTS if not dry else [16, 64]
        for b in batches:
            for L in lens:
                if time.time() > deadline:
                    break
                try:
                    q = randn(b, nq, 1, hd)
                    k = randn(b, nkv, L, hd)
                    v = randn(b, nkv, L, hd)
                    ts, label = run_cell("decode", q, k, v, None, False)
                    sink.add(["decode", b, 1, L, nq, nkv, hd, statistics.median(ts), min(ts),
                              label])
                    log("attn decode b=%-4d L=%-5d %.4f ms" % (b, L, statistics.median(ts)))
                    del q, k, v
                except Exception as exc:  # noqa: BLE001
                    meta.error("attention decode b=%d L=%d" % (b, L), exc)
                free()
        sink.close()

    # ------------------------------------------------------------------------------------------
    def mlp_model(m):
        sink = CsvSink(os.path.join(args.out, mlp_filename(m["name"])), MLP_COLUMNS)
        tokens = TOKENS if not dry else DRY_TOKENS
        for tp in m["tps"]:
            if time.time() > deadline:
                log("mlp %s: deadline, skipping TP %d" % (m["name"], tp))
                continue
            t_tp = time.time()
            try:
                sh = model_shapes(m, tp)
                if dry:  # shrink everything; the bookkeeping is what is checked
                    sh = dict(head_dim=16, n_q=4, n_kv=2, hidden=64, qkv_out=128,
                              attn_out_in=64, up_out=256, inter=128, vocab_rows=1000)
                H = sh["hidden"]
                gemm_w = {}
                for op, (n_out, k_in) in (("attn_pre_proj", (sh["qkv_out"], H)),
                                          ("attn_post_proj", (H, sh["attn_out_in"])),
                                          ("mlp_up_proj", (sh["up_out"], H)),
                                          ("mlp_down_proj", (H, sh["inter"]))):
                    nc = rotation_copies(n_out * k_in * 2, l2_bytes) if not dry else 2
                    gemm_w[op] = [randn(n_out, k_in) for _ in range(nc)]
                meta.d.setdefault("weight_copies", {})["%s tp%d" % (m["name"], tp)] = {
                    op: len(w) for op, w in gemm_w.items()}
                table = randn(sh["vocab_rows"], H)
                norm_w = randn(H)
                hd = sh["head_dim"]
                ang = torch.rand(4096, hd // 2, device=dev, dtype=torch.float32) * 6.28
                cos, sin = ang.cos(), ang.sin()
            except Exception as exc:  # noqa: BLE001
                meta.error("mlp %s tp%d setup" % (m["name"], tp), exc)
                free()
                continue
            for T in tokens:
                if time.time() > deadline:
                    log("mlp %s tp%d: deadline, skipping T>=%d" % (m["name"], tp, T))
                    break
                try:
                    x = randn(T, H)
                    res = randn(T, H)
                    ids = torch.randint(0, sh["vocab_rows"], (T,), device=dev)
                    pos = torch.randint(0, 4096, (T,), device=dev)
                    qkv = randn(T, sh["qkv_out"])
                    attn_o = randn(T, sh["attn_out_in"])
                    up_o = randn(T, sh["up_out"])
                    act_o = randn(T, sh["inter"])
                    n_rot = sh["n_q"] + sh["n_kv"]

                    def gemm(op, inp):
                        ws = gemm_w[op]
                        return lambda i: F.linear(inp, ws[i % len(ws)])

                    fns = {
                        "emb": lambda i: F.embedding(ids, table),
                        "input_layernorm": lambda i: impl["rmsnorm"](x, norm_w),
                        "attn_pre_proj": gemm("attn_pre_proj", x),
                        "attn_rope": lambda i: impl["rope"](qkv, pos, cos, sin, n_rot, hd),
                        "attn_post_proj": gemm("attn_post_proj", attn_o),
                        "post_attention_layernorm": lambda i: impl["rmsnorm"](x, norm_w),
                        "mlp_up_proj": gemm("mlp_up_proj", x),
                        "mlp_act": lambda i: impl["silu_mul"](up_o),
                        "mlp_down_proj": gemm("mlp_down_proj", act_o),
                        "add": lambda i: torch.add(x, res),
                    }
                    if T == 1024 and tp == m["tps"][0] and m is MODELS[0]:
                        for op in OPS:
                            kernel_names("%s tp%d T=%d %s" % (m["name"], tp, T, op), fns[op])
                    stats = {}
                    key = "%s tp%d T=%d" % (m["name"], tp, T)
                    for op in OPS:
                        ts, pr = measure(fns[op], tag="%s %s" % (key, op),
                                         on_enqueued=probe if op == "mlp_up_proj" else None)
                        stats[op] = summarize(ts)
                        if pr is not None:
                            meta.d.setdefault("mlp_up_proj_sm_clock_mhz_during", {})[key] = pr[0]
                    sink.add(mlp_row(m, tp, T, stats))
                    log("mlp %-36s tp%d T=%-5d pre %.4f up %.4f down %.4f act %.4f norm %.4f" % (
                        m["name"], tp, T, stats["attn_pre_proj"]["median"],
                        stats["mlp_up_proj"]["median"], stats["mlp_down_proj"]["median"],
                        stats["mlp_act"]["median"], stats["input_layernorm"]["median"]))
                    del x, res, ids, pos, qkv, attn_o, up_o, act_o
                except Exception as exc:  # noqa: BLE001
                    meta.error("mlp %s tp%d T=%d" % (m["name"], tp, T), exc)
            del gemm_w, table, norm_w
            free()
            meta.d.setdefault("mlp_wall_s", {})["%s tp%d" % (m["name"], tp)] = round(
                time.time() - t_tp, 2)
            meta.save()
        sink.close()

    def save_tstats():
        meta.d["timer"] = dict(cells=tstats["cells"], retries=tstats["retries"],
                               dirty_cells=len(tstats["dirty"]), dirty=tstats["dirty"][:200],
                               sleep_available=sleep_ok[0])

    wanted = set(args.sections.split(","))
    if "calib" in wanted:
        run_section("calib", section_calib, meta, deadline)
    if "gemm" in wanted:
        run_section("gemm", section_gemm, meta, deadline)
    if "attention" in wanted:
        run_section("attention", section_attention, meta, deadline)
    if "mlp" in wanted:
        for m in MODELS:
            run_section("mlp " + m["name"], lambda m=m: mlp_model(m), meta, deadline)
            save_tstats()
    save_tstats()
    meta.d["total_wall_s"] = round(time.time() - T0, 2)
    meta.save()
    log("done in %.1f s, %d errors; timer: %d cells, %d retries, %d dirty" % (
        time.time() - T0, len(meta.d["errors"]), tstats["cells"], tstats["retries"],
        len(tstats["dirty"])))
    for e in meta.d["errors"]:
        log("  error: " + e["error"][:300])


if __name__ == "__main__":
    main()
