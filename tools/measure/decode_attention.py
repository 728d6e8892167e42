#!/usr/bin/env python3
"""Decode-attention bandwidth on one GPU: how much of the datasheet bandwidth a decode step's
attention (one query token per request reading its whole K/V cache) achieves, per head layout.

Writes under --out:
  decode_attention.csv  kernel, layout, batch, context, time (ms, median/min of --reps), bytes,
                        achieved TB/s
  stream_read.csv       a plain streaming read (torch.sum over a bf16 tensor) by size: the
                        achievable read bandwidth of the memory system
  env.json              torch/CUDA versions, device, which attention libraries import

Kernels: torch SDPA (flash backend, native GQA and K/V expanded to the query heads), and when
importable flash_attn.flash_attn_with_kvcache with a paged cache (block_table, page 256) and
vllm's paged-attention ops. Every cell is independent: an error is recorded and the run goes on.
"""

import argparse
import csv
import json
import os
import statistics
import time
import traceback


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget-s", type=float, default=150)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t_end = time.time() + args.budget_s
    import torch
    import torch.nn.functional as F

    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "errors": []}
    dev = torch.device("cuda")
    p = torch.cuda.get_device_properties(dev)
    env["device"] = {"name": p.name, "sms": p.multi_processor_count,
                     "memory": p.total_memory}
    libs = {}
    for name in ("flash_attn", "flashinfer", "vllm", "triton", "xformers"):
        try:
            mod = __import__(name)
            libs[name] = getattr(mod, "__version__", "present")
        except Exception as exc:  # noqa: BLE001
            libs[name] = "absent: %s" % str(exc).splitlines()[0][:120]
    env["libs"] = libs

    def timed(fn, reps=args.reps):
        fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
        return statistics.median(ts), min(ts)

    # Streaming read reference.
    with open(os.path.join(args.out, "stream_read.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bytes", "time_ms_median", "time_ms_min", "tb_per_s_median"])
        for mib in (64, 256, 1024, 4096, 16384):
            try:
                x = torch.empty(mib * (1 << 20) // 2, dtype=torch.bfloat16, device=dev).uniform_()
                med, mn = timed(lambda: x.sum(dtype=torch.float32))
                nb = x.numel() * 2
                w.writerow([nb, med, mn, nb / (med * 1e-3) / 1e12])
                f.flush()
                del x
            except Exception as exc:  # noqa: BLE001
                env["errors"].append("stream %d MiB: %s" % (mib, exc))
            torch.cuda.empty_cache()

    fa = None
    try:
        from flash_attn import flash_attn_with_kvcache as fa  # noqa: F811
    except Exception:  # noqa: BLE001
        fa = None

    layouts = [("mha32", 32, 32, 128), ("gqa32x8", 32, 8, 128), ("gqa64x8", 64, 8, 128)]
    batches = (16, 64, 128)
    contexts = (512, 1024, 2048)
    out = open(os.path.join(args.out, "decode_attention.csv"), "w", newline="")
    w = csv.writer(out)
    w.writerow(["kernel", "layout", "n_q_heads", "n_kv_heads", "head_dim", "batch", "context",
                "time_ms_median", "time_ms_min", "kv_bytes", "tb_per_s_median"])
    for label, nq, nkv, hd in layouts:
        for b in batches:
            for L in contexts:
                if time.time() > t_end:
                    env["errors"].append("budget reached at %s b=%d L=%d" % (label, b, L))
                    break
                kv_bytes = 2 * b * L * nkv * hd * 2
                try:
                    q = torch.randn(b, nq, 1, hd, dtype=torch.bfloat16, device=dev)
                    k = torch.randn(b, nkv, L, hd, dtype=torch.bfloat16, device=dev)
                    v = torch.randn(b, nkv, L, hd, dtype=torch.bfloat16, device=dev)
                    cells = []
                    from torch.nn.attention import SDPBackend, sdpa_kernel
                    if nq == nkv:
                        cells.append(("sdpa_flash", lambda: F.scaled_dot_product_attention(q, k, v)))
                    else:
                        cells.append(("sdpa_flash_gqa", lambda: F.scaled_dot_product_attention(
                            q, k, v, enable_gqa=True)))
                    for kname, fn in cells:
                        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                            med, mn = timed(fn)
                        w.writerow([kname, label, nq, nkv, hd, b, L, med, mn, kv_bytes,
                                    kv_bytes / (med * 1e-3) / 1e12])
                        out.flush()
                    del k, v
                    if fa is not None:
                        page = 256
                        pages = (L + page - 1) // page
                        kc = torch.randn(b * pages, page, nkv, hd, dtype=torch.bfloat16,
                                         device=dev)
                        vc = torch.randn_like(kc)
                        perm = torch.randperm(b * pages, device=dev, dtype=torch.int32)
                        table = perm.view(b, pages)
                        seqlens = torch.full((b,), L, dtype=torch.int32, device=dev)
                        qf = q.transpose(1, 2).contiguous()  # (b, 1, nq, hd)
                        med, mn = timed(lambda: fa(qf, kc, vc, cache_seqlens=seqlens,
                                                   block_table=table))
                        w.writerow(["flash_attn_paged256", label, nq, nkv, hd, b, L, med, mn,
                                    kv_bytes, kv_bytes / (med * 1e-3) / 1e12])
                        out.flush()
                        del kc, vc
                    del q
                except Exception as exc:  # noqa: BLE001
                    env["errors"].append("%s b=%d L=%d: %s" % (label, b, L,
                                                                traceback.format_exc()[-400:]))
                torch.cuda.empty_cache()
    out.close()
    with open(os.path.join(args.out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)


if __name__ == "__main__":
    main()
