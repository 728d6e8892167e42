"""Section mlp: every op of one layer over the token grid, per model and TP -> mlp__*.csv."""
import os
import time

from .runlog import CsvSink, log
from .tables import (DRY_TOKENS, MLP_COLUMNS, MODELS, OPS, TOKENS, mlp_filename, mlp_row,
                     model_shapes, rotation_copies, summarize)


def build(ctx):
    """mlp_model bound to ctx."""
    # The names main() held, so that the body below reads as it did there.
    args, meta, deadline, dry, dev = ctx.args, ctx.meta, ctx.deadline, ctx.dry, ctx.dev
    torch, F, l2_bytes, measure, probe = ctx.torch, ctx.F, ctx.l2_bytes, ctx.measure, ctx.probe
    kernel_names, randn, free, impl = ctx.kernel_names, ctx.randn, ctx.free, ctx.impl

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

    return mlp_model
