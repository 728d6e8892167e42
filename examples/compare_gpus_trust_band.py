#!/usr/bin/env python3
"""Compare three GPUs for my workload with a trust band.

The same workload (configs/h200_sarathi.yaml: Llama-3.1-8B, ShareGPT lengths, Poisson 6.5 req/s)
on one A100-80GB, H100 or H200. Each run also runs with every step time +/-2% (sensitivity), which
gives each latency's gain: the % it moves per 1% of step-time error. With the cost model's error
(--step-error-pct, e.g. what `costmodel validate` or `sim2real` measured), the trust band of a
latency is value × (1 ± gain × error): wide near capacity, where queues amplify pricing errors.

    PYTHONPATH=build/python python3 examples/compare_gpus_trust_band.py [--out DIR]
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import servesim  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE.parent / "configs" / "h200_sarathi.yaml"
GPUS = ["a100-80gb", "h100", "h200"]
METRICS = [("ttft", "p99"), ("tbt", "p99"), ("e2e", "p50")]

args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
args.add_argument("--step-error-pct", type=float, default=5.0, help="step-time error (%%)")
args.add_argument("--requests", type=int, default=4000, help="requests per run")
args.add_argument("--out", default="out/examples", help="folder of compare_gpus_trust_band.png")
a = args.parse_args()

rows = {}
for gpu in GPUS:
    r = servesim.simulate(CONFIG, sensitivity=2, overrides={
        "replicas.0.gpu": gpu, "workload.num_requests": a.requests})
    gain = r.summary["sensitivity"]["gain"]
    rows[gpu] = []
    for metric, stat in METRICS:
        value = r.summary["latency_ms"][metric][stat]
        g = gain[metric][stat] or 0.0
        rows[gpu].append((value, abs(g) * a.step_error_pct / 100 * value, g))
    print(f"{gpu:10s} " + "  ".join(
        f"{m}_{s} {v:9.1f} ms ±{b:8.1f} (gain {g:5.1f})"
        for (m, s), (v, b, g) in zip(METRICS, rows[gpu])))

fig, axes = plt.subplots(1, len(METRICS), figsize=(4 * len(METRICS), 3.5))
for ax, (i, (metric, stat)) in zip(axes, enumerate(METRICS)):
    ax.bar(GPUS, [rows[g][i][0] for g in GPUS], yerr=[rows[g][i][1] for g in GPUS], capsize=6)
    ax.set_title(f"{metric} {stat} (ms), ±{a.step_error_pct:g}% step error")
fig.tight_layout()
out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "compare_gpus_trust_band.png", dpi=120, bbox_inches="tight")
print(f"wrote {out / 'compare_gpus_trust_band.png'}")
