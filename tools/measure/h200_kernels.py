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
import os
import platform
import subprocess
import sys
import time
from types import SimpleNamespace

sys.dont_write_bytecode = True  # the kernels package beside this script: leave no __pycache__

from kernels import attention, calib, gemm, light, mlp, timer  # noqa: E402
from kernels.runlog import T0, Meta, log, run_section  # noqa: E402
from kernels.tables import MODELS  # noqa: E402


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

    # What the sections share; each module's build() adds its helpers or returns its section.
    ctx = SimpleNamespace(args=args, meta=meta, deadline=deadline, torch=torch, F=F, dry=dry,
                          dev=dev, dtype=dtype, triton=triton, tl=tl, l2_bytes=l2_bytes)
    timer.build(ctx)
    light.build(ctx)
    section_calib = calib.build(ctx)
    section_gemm = gemm.build(ctx)
    section_attention = attention.build(ctx)
    mlp_model = mlp.build(ctx)
    tstats, sleep_ok = ctx.tstats, ctx.sleep_ok

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
