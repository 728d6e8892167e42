#!/usr/bin/env python3
"""Pick a chunk budget and plot the frontier.

One sweep of the E2.9 workload (long prompts on one H200) over the chunked-prefill token budget:
the pick is the largest budget whose TBT p99 meets the SLO (the sweep's selection); the picture
is output throughput against TBT p99, one point per budget, the SLO and the pick marked.

    PYTHONPATH=build/python python3 examples/chunk_budget_frontier.py [--slo-ms 40] [--out DIR]
"""

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import servesim  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE.parent / "configs" / "experiments" / "e2_9_chunk_budget.yaml"
KEY = "scheduler.max_num_batched_tokens"

args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
args.add_argument("--slo-ms", type=float, default=40.0, help="TBT p99 bound (ms)")
args.add_argument("--requests", type=int, default=1000, help="requests per run")
args.add_argument("--out", default="out/examples", help="folder of chunk_budget_frontier.png")
a = args.parse_args()

s = servesim.sweep(CONFIG, vary={KEY: "256..8192:x2"},
                   overrides={"workload.num_requests": a.requests},
                   slo={"tbt_p99_ms": a.slo_ms}, pick=f"max:{KEY}")
points = [(m[KEY], m["tbt_p99_ms_mean"], m["output_tok_s_mean"]) for m in s.means]
pick = s.pick["values"][KEY] if s.pick else None
for budget, tbt, tput in points:
    print(f"budget {budget:5d}: TBT p99 {tbt:7.2f} ms, {tput:8.1f} output tok/s"
          f"{'  <- pick' if budget == pick else ''}")
if pick is None:
    print(f"no budget meets TBT p99 <= {a.slo_ms:g} ms")

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot([p[1] for p in points], [p[2] for p in points], "o-")
for budget, tbt, tput in points:
    ax.annotate(str(budget), (tbt, tput), textcoords="offset points", xytext=(4, -10))
    if budget == pick:
        ax.plot([tbt], [tput], "r*", markersize=14, label=f"pick {pick}")
ax.axvline(a.slo_ms, color="red", linestyle="--", label=f"SLO {a.slo_ms:g} ms")
ax.set_xlabel("TBT p99 (ms)")
ax.set_ylabel("output tokens/s")
ax.set_title("chunk budget frontier (H200, Llama-3.1-8B)")
ax.legend()
out = pathlib.Path(a.out)
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "chunk_budget_frontier.png", dpi=120, bbox_inches="tight")
print(f"wrote {out / 'chunk_budget_frontier.png'}")
