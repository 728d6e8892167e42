"""Section gemm: large bf16 GEMMs and hot-vs-rotated small-M GEMMs -> gemm_sweep.csv."""
import os
import statistics
import time

from .runlog import CsvSink, log
from .tables import GEMM_COLUMNS, rotation_copies


def build(ctx):
    """section_gemm bound to ctx."""
    # The names main() held, so that the body below reads as it did there.
    args, meta, deadline, dry, F = ctx.args, ctx.meta, ctx.deadline, ctx.dry, ctx.F
    l2_bytes, measure, probe, randn = ctx.l2_bytes, ctx.measure, ctx.probe, ctx.randn
    free = ctx.free

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

    return section_gemm
