#!/usr/bin/env python3
"""Sustained clock, board power and temperature of one GPU under steady kernels.

The power model (costmodels/analytical/power_model.hpp) settles each kernel at the
clock where its board power meets the cap.  Two questions it cannot answer from public data:
  1. Does the clock a GEMM sustains at the default cap fall with M at a near-constant tensor
     activity per clock (the measured RTX 5090 / L40S / Max-Q droop grows with M; the model's does
     not), and if so, does it follow the die temperature (leakage) or the cell's length (the power
     limiter's averaging window)?
  2. What does a memory-bound kernel draw per byte of DRAM traffic, on-chip movement included
     (the energy per token is 41-53% low against ML.ENERGY on H100)?
It changes no GPU setting (no clock lock, no power limit): it runs each kernel back to back for
--cell-s seconds and samples NVML every --sample-ms while it runs.

Outputs (flat, under --out, so that a lent device machine can return them):
  cells.csv   one row per cell: what ran, its rate over the settled second half (TFLOP/s, TB/s),
              the median SM clock, board power and temperature there, over the first 0.2 s, and
              the OR of NVML's clock-event (throttle) reasons
  trace.csv   every NVML sample: cell, seconds into the cell, SM clock, power, temperature,
              reasons
  meta.json   versions, device, the NVML readings used (instant or averaged power), errors,
              wall times

Sections (--sections, default all, in this order):
  idle    the board idle before and after a large allocation (the held-memory idle draw)
  gemm    bf16 GEMMs of Llama-3-8B's qkv shape (K 4096, N 6144) at M 64 ... 16384 and an 8192^3,
          hot weights as the RTX 5090 cap sweep ran them, ascending then descending (thermal history vs M),
          with --cool-s of idle before each
  stream  sustained DRAM traffic: read (a sum), write (a fill) and copy of --stream-gib buffers
  decode  decode-shaped GEMMs (M 1, 16, 64) with their weights rotated through copies larger
          than 3x L2, so every rep streams its weights from DRAM

--dry-run runs the bookkeeping on the CPU with tiny shapes and no NVML (its numbers mean
nothing).
"""

import argparse
import csv
import json
import math
import os
import platform
import statistics
import sys
import threading
import time
import traceback

CELL_COLUMNS = ["cell", "section", "name", "M", "K", "N", "order", "seconds", "reps", "tflops",
                "tbytes_per_s", "clock_mhz", "power_w", "temp_c", "clock_mhz_first_0.2s",
                "power_w_first_0.2s", "temp_c_start", "temp_c_end", "reasons", "samples"]
TRACE_COLUMNS = ["cell", "t_s", "clock_mhz", "power_w", "temp_c", "reasons"]
QKV_K, QKV_N = 4096, 6144
GEMM_MS = [64, 256, 1024, 2048, 4096, 8192, 16384]
DECODE_MS = [1, 16, 64]


class Meta:
    def __init__(self):
        self.data = {"errors": [], "sections": {}}

    def error(self, where, exc):
        self.data["errors"].append({"where": where, "error": repr(exc),
                                    "trace": traceback.format_exc()})
        print("error in %s: %r" % (where, exc), flush=True)


class Nvml:
    """SM clock, board power, temperature and clock-event reasons; NaN without NVML."""

    def __init__(self, meta, enabled):
        self.m = None
        self.h = None
        self.instant_field = None
        if not enabled:
            return
        try:
            import pynvml
            pynvml.nvmlInit()
            self.m = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            # Instantaneous board power where the driver has it (Hopper); the plain usage is an
            # average over about a second and lags a change of load.
            field = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)
            if field is not None:
                v = pynvml.nvmlDeviceGetFieldValues(self.h, [field])[0]
                if v.nvmlReturn == 0:
                    self.instant_field = field
            meta.data["power_reading"] = ("NVML_FI_DEV_POWER_INSTANT" if self.instant_field
                                          else "nvmlDeviceGetPowerUsage (averaged)")
            meta.data["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(self.h) / 1000.0
            meta.data["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(
                self.h, pynvml.NVML_CLOCK_SM)
        except Exception as exc:  # noqa: BLE001 - recorded; the run goes on without samples
            meta.error("nvml", exc)
            self.m = None

    def sample(self):
        if self.m is None:
            return (math.nan, math.nan, math.nan, 0)
        m, h = self.m, self.h
        clock = float(m.nvmlDeviceGetClockInfo(h, m.NVML_CLOCK_SM))
        if self.instant_field is not None:
            v = m.nvmlDeviceGetFieldValues(h, [self.instant_field])[0]
            power = v.value.uiVal / 1000.0 if v.nvmlReturn == 0 else math.nan
        else:
            power = m.nvmlDeviceGetPowerUsage(h) / 1000.0
        temp = float(m.nvmlDeviceGetTemperature(h, m.NVML_TEMPERATURE_GPU))
        reasons = 0
        for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                     "nvmlDeviceGetCurrentClocksThrottleReasons"):
            if hasattr(m, name):
                try:
                    reasons = int(getattr(m, name)(h))
                    break
                except Exception:  # noqa: BLE001 - not every driver answers
                    pass
        return (clock, power, temp, reasons)


class Sampler:
    """Samples NVML every period_s in a thread while a cell runs."""

    def __init__(self, nvml, period_s):
        self.nvml = nvml
        self.period_s = period_s
        self.samples = []
        self._stop = threading.Event()
        self._thread = None
        self.t0 = 0.0

    def __enter__(self):
        self.t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            t = time.perf_counter() - self.t0
            self.samples.append((t,) + self.nvml.sample())
            self._stop.wait(self.period_s)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False


def median_of(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


class Probe:
    def __init__(self, args, meta):
        import torch
        self.torch = torch
        self.args = args
        self.meta = meta
        self.dry = args.dry_run
        self.device = "cpu" if self.dry else "cuda"
        self.dtype = torch.float32 if self.dry else torch.bfloat16
        self.nvml = Nvml(meta, enabled=not self.dry)
        self.cell = 0
        self.graphs = []
        self.cells = open(os.path.join(args.out, "cells.csv"), "w", newline="")
        self.trace = open(os.path.join(args.out, "trace.csv"), "w", newline="")
        self.cw = csv.writer(self.cells)
        self.tw = csv.writer(self.trace)
        self.cw.writerow(CELL_COLUMNS)
        self.tw.writerow(TRACE_COLUMNS)
        self.t_start = time.perf_counter()

    def over_budget(self):
        return time.perf_counter() - self.t_start > self.args.budget_s

    def sync(self):
        if not self.dry:
            self.torch.cuda.synchronize()

    def sustain(self, fn, seconds):
        """Runs fn back to back for `seconds`; returns [(t_end, reps)] per batch, where t_end is
        seconds since the start (GPU time by CUDA events, host time on the CPU)."""
        torch = self.torch
        batch = 1
        out = []
        fn()  # warm-up (allocations, kernel selection)
        self.sync()
        if self.dry:
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for _ in range(batch):
                    fn()
                out.append((time.perf_counter() - t0, batch))
            return out
        start = torch.cuda.Event(enable_timing=True)
        start.record()
        events = []
        t_host = time.perf_counter()
        # Keep about two batches of ~20 ms queued so the GPU never idles between them.
        probe_end = torch.cuda.Event(enable_timing=True)
        fn()
        probe_end.record()
        probe_end.synchronize()
        one_ms = max(start.elapsed_time(probe_end), 1e-3)
        batch = max(1, min(2000, int(20.0 / one_ms)))
        out.append((start.elapsed_time(probe_end) / 1e3, 1))
        # A batch replays as one CUDA graph where it can be captured, so that short kernels
        # (decode GEMMs of ~10 µs) run back to back instead of at Python's launch rate.
        run_batch = self.graphed(fn, batch)
        while time.perf_counter() - t_host < seconds:
            run_batch()
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            events.append(ev)
            if len(events) >= 2:
                events[-2].synchronize()
        self.sync()
        for ev in events:
            out.append((start.elapsed_time(ev) / 1e3, batch))
        return out

    def graphed(self, fn, reps):
        """A callable running fn `reps` times: one CUDA graph replay, or a loop where capture
        fails (recorded in meta.json)."""
        torch = self.torch

        def loop():
            for _ in range(reps):
                fn()

        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    fn()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                loop()
            self.sync()
            self.graphs.append(graph)  # keep its memory pool alive for the cell
            self.meta.data.setdefault("graph_cells", []).append(self.cell + 1)
            return graph.replay
        except Exception as exc:  # noqa: BLE001 - eager launches still measure the cell
            self.meta.data.setdefault("notes", []).append(
                "graph capture failed, cell %d runs eager: %r" % (self.cell + 1, exc))
            self.sync()
            return loop

    def run_cell(self, section, name, fn, flops_per_rep, bytes_per_rep, m=0, k=0, n=0,
                 order="", seconds=None):
        seconds = self.args.cell_s if seconds is None else seconds
        self.cell += 1
        cell = self.cell
        with Sampler(self.nvml, self.args.sample_ms / 1e3) as sampler:
            if fn is None:  # an idle reading: nothing queued
                time.sleep(seconds)
                batches = [(seconds, 0)]
            else:
                batches = self.sustain(fn, seconds)
        samples = sampler.samples
        self.graphs.clear()
        for s in samples:
            self.tw.writerow([cell, "%.4f" % s[0]] + ["%.1f" % v for v in s[1:4]] + [s[4]])
        total = batches[-1][0] if batches else 0.0
        half = total / 2
        # Rate over the batches that end in the second half (the settled part).
        reps = 0
        t_first = None
        prev_end = 0.0
        for t_end, r in batches:
            if t_end > half:
                if t_first is None:
                    t_first = prev_end
                reps += r
            prev_end = t_end
        span = total - (t_first if t_first is not None else 0.0)
        settled = [s for s in samples if s[0] >= samples[-1][0] / 2] if samples else []
        first = [s for s in samples if s[0] <= 0.2]
        reasons = 0
        for s in settled:
            reasons |= s[4]
        row = {
            "cell": cell, "section": section, "name": name, "M": m, "K": k, "N": n,
            "order": order, "seconds": "%.3f" % total,
            "reps": reps,
            "tflops": "%.2f" % (flops_per_rep * reps / span / 1e12) if span > 0 else "",
            "tbytes_per_s": "%.3f" % (bytes_per_rep * reps / span / 1e12) if span > 0 else "",
            "clock_mhz": "%.0f" % median_of([s[1] for s in settled]),
            "power_w": "%.1f" % median_of([s[2] for s in settled]),
            "temp_c": "%.0f" % median_of([s[3] for s in settled]),
            "clock_mhz_first_0.2s": "%.0f" % median_of([s[1] for s in first]),
            "power_w_first_0.2s": "%.1f" % median_of([s[2] for s in first]),
            "temp_c_start": "%.0f" % (samples[0][3] if samples else math.nan),
            "temp_c_end": "%.0f" % (samples[-1][3] if samples else math.nan),
            "reasons": "0x%x" % reasons,
            "samples": len(samples),
        }
        self.cw.writerow([row[c] for c in CELL_COLUMNS])
        self.cells.flush()
        self.trace.flush()
        print("cell %3d %-7s %-14s M=%-6s %s TFLOP/s %s TB/s  %s MHz %s W %s C  reasons %s"
              % (cell, section, name, m, row["tflops"], row["tbytes_per_s"], row["clock_mhz"],
                 row["power_w"], row["temp_c"], row["reasons"]), flush=True)

    def idle(self, seconds, name):
        """Samples an idle board (the caller holds whatever memory it means to hold)."""
        self.run_cell("idle", name, None, 0, 0, seconds=seconds)

    def cool(self):
        self.sync()
        time.sleep(self.args.cool_s)

    # Sections ----------------------------------------------------------------------------------

    def section_idle(self):
        torch = self.torch
        self.sync()
        self.idle(self.args.idle_s, "no_allocation")
        held = None
        try:
            gib = 1 if self.dry else self.args.hold_gib
            held = torch.empty(int(gib * 2**30), dtype=torch.uint8, device=self.device)
            held.fill_(1)
            self.sync()
            self.idle(self.args.idle_s, "holding_%dGiB" % gib)
        finally:
            del held

    def gemm(self, m, k, n):
        torch = self.torch
        a = torch.randn(m, k, device=self.device, dtype=self.dtype)
        w = torch.randn(n, k, device=self.device, dtype=self.dtype)
        out = torch.empty(m, n, device=self.device, dtype=self.dtype)
        return (lambda: torch.matmul(a, w.t(), out=out)), 2.0 * m * k * n, 2.0 * (m * k + k * n + m * n)

    def section_gemm(self):
        ms = [8, 16] if self.dry else GEMM_MS
        k, n = (64, 96) if self.dry else (QKV_K, QKV_N)
        square = 64 if self.dry else 8192
        cells = [("qkv", mm, k, n) for mm in ms] + [("square", square, square, square)]
        for order, seq in (("up", cells), ("down", list(reversed(cells)))):
            for name, mm, kk, nn in seq:
                if self.over_budget():
                    print("budget reached: gemm stops", flush=True)
                    return
                try:
                    fn, flops, nbytes = self.gemm(mm, kk, nn)
                    self.cool()
                    self.run_cell("gemm", name, fn, flops, nbytes, mm, kk, nn, order)
                    del fn
                except Exception as exc:  # noqa: BLE001 - one cell; the run goes on
                    self.meta.error("gemm %s M=%d %s" % (name, mm, order), exc)

    def section_stream(self):
        torch = self.torch
        elems = (1 << 16) if self.dry else int(self.args.stream_gib * 2**30 // 2)
        x = torch.randn(elems, device=self.device, dtype=self.dtype)
        y = torch.empty_like(x)
        nbytes = x.numel() * x.element_size()
        cells = [
            ("read_sum", lambda: x.sum(), nbytes),
            ("write_fill", lambda: y.fill_(1.0), nbytes),
            ("copy", lambda: y.copy_(x), 2 * nbytes),
        ]
        for name, fn, moved in cells:
            if self.over_budget():
                print("budget reached: stream stops", flush=True)
                return
            try:
                self.cool()
                self.run_cell("stream", name, fn, 0, moved)
            except Exception as exc:  # noqa: BLE001
                self.meta.error("stream " + name, exc)

    def section_decode(self):
        torch = self.torch
        k, n = (64, 96) if self.dry else (QKV_K, QKV_N)
        l2 = 1 if self.dry else torch.cuda.get_device_properties(0).L2_cache_size
        wbytes = k * n * (4 if self.dry else 2)
        copies = max(2, int(math.ceil(3 * l2 / wbytes)))
        ws = [torch.randn(n, k, device=self.device, dtype=self.dtype) for _ in range(copies)]
        self.meta.data["decode_weight_copies"] = copies
        for m in ([1, 4] if self.dry else DECODE_MS):
            if self.over_budget():
                print("budget reached: decode stops", flush=True)
                return
            try:
                a = torch.randn(m, k, device=self.device, dtype=self.dtype)
                out = torch.empty(m, n, device=self.device, dtype=self.dtype)
                state = {"i": 0}

                def fn(a=a, out=out, state=state):
                    state["i"] = (state["i"] + 1) % copies
                    torch.matmul(a, ws[state["i"]].t(), out=out)

                self.cool()
                self.run_cell("decode", "qkv_rotated", fn, 2.0 * m * k * n,
                              2.0 * (m * k + m * n) + wbytes, m, k, n)
            except Exception as exc:  # noqa: BLE001
                self.meta.error("decode M=%d" % m, exc)

    def close(self):
        self.cells.close()
        self.trace.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output folder (flat files)")
    p.add_argument("--sections", default="idle,gemm,stream,decode",
                   help="comma-separated subset of idle,gemm,stream,decode")
    p.add_argument("--cell-s", type=float, default=3.0, help="seconds each kernel is sustained")
    p.add_argument("--cool-s", type=float, default=1.5, help="idle seconds before each cell")
    p.add_argument("--idle-s", type=float, default=3.0, help="seconds of each idle reading")
    p.add_argument("--sample-ms", type=float, default=10.0, help="NVML sampling period")
    p.add_argument("--hold-gib", type=float, default=64.0, help="memory held in the idle reading")
    p.add_argument("--stream-gib", type=float, default=4.0, help="size of each stream buffer")
    p.add_argument("--budget-s", type=float, default=300.0,
                   help="start no new cell after this many seconds (rows already written stay)")
    p.add_argument("--dry-run", action="store_true", help="CPU, tiny shapes, no NVML")
    args = p.parse_args()
    sections = [s for s in args.sections.split(",") if s]
    known = ["idle", "gemm", "stream", "decode"]
    for s in sections:
        if s not in known:
            p.error("--sections: unknown '%s' (known: %s)" % (s, ", ".join(known)))
    if args.dry_run:
        args.cell_s, args.cool_s, args.idle_s = min(args.cell_s, 0.2), 0.0, 0.1
    os.makedirs(args.out, exist_ok=True)
    meta = Meta()
    meta.data.update({"argv": sys.argv, "python": platform.python_version(),
                      "started_unix": time.time(), "dry_run": args.dry_run})
    probe = None
    try:
        import torch
        meta.data["torch"] = torch.__version__
        if not args.dry_run:
            props = torch.cuda.get_device_properties(0)
            meta.data["device"] = {"name": props.name, "sms": props.multi_processor_count,
                                   "memory_bytes": props.total_memory,
                                   "l2_bytes": getattr(props, "L2_cache_size", None)}
        probe = Probe(args, meta)
        for s in sections:
            t0 = time.perf_counter()
            try:
                getattr(probe, "section_" + s)()
            except Exception as exc:  # noqa: BLE001 - one section; the others still run
                meta.error("section " + s, exc)
            meta.data["sections"][s] = {"wall_s": round(time.perf_counter() - t0, 2)}
    except Exception as exc:  # noqa: BLE001
        meta.error("setup", exc)
    finally:
        if probe is not None:
            probe.close()
        meta.data["total_wall_s"] = round(time.time() - meta.data["started_unix"], 2)
        with open(os.path.join(args.out, "meta.json"), "w") as f:
            json.dump(meta.data, f, indent=1)
    return 1 if meta.data["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
