"""Section calib: the light kernels' self-check, the timer's overhead and the copy ceiling."""
import statistics

from .runlog import log


def build(ctx):
    """section_calib bound to ctx."""
    # The names main() held, so that the body below reads as it did there.
    torch, dry, dev, meta, measure = ctx.torch, ctx.dry, ctx.dev, ctx.meta, ctx.measure
    randn, free, self_check = ctx.randn, ctx.free, ctx.self_check

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

    return section_calib
