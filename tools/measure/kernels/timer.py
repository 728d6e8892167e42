"""Clock and power probes, the timer every section measures with, and tensor helpers."""
import gc
import time

from .runlog import log
from .tables import reps_for


def build(ctx):
    """Defines the probes and the timer on ctx's device and adds them to ctx."""
    # The names main() held, so that the body below reads as it did there.
    torch, dry, dev, dtype, meta = ctx.torch, ctx.dry, ctx.dev, ctx.dtype, ctx.meta

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

    ctx.probe = probe
    ctx.measure = measure
    ctx.kernel_names = kernel_names
    ctx.randn = randn
    ctx.free = free
    ctx.sleep_ok = sleep_ok
    ctx.tstats = tstats
