"""Section attention: prefill (causal, with and without context) and decode SDPA times."""
import os
import statistics
import time

from .runlog import CsvSink, log
from .tables import (ATTN_COLUMNS, ATTN_HD, ATTN_NKV, ATTN_NQ, DECODE_BATCHES, DECODE_CONTEXTS,
                     PREFILL_CHUNKS, PREFILL_CONTEXTS)


def build(ctx):
    """section_attention bound to ctx."""
    # The names main() held, so that the body below reads as it did there.
    args, meta, deadline, dry, F = ctx.args, ctx.meta, ctx.deadline, ctx.dry, ctx.F
    measure, kernel_names, randn, free = ctx.measure, ctx.kernel_names, ctx.randn, ctx.free

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

    return section_attention
