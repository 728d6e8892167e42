#!/usr/bin/env bash
# The CPU KV tier study (doc/guide.md, "What does a CPU KV tier buy?"): the first 1,000 requests of
# the Mooncake conversation trace, stretched 8× in time (0.42 req/s), on one H100 serving
# Llama-3.1-8B with prefix caching (mooncake_prefix.yaml with one replica), at two GPU KV sizes
# (8,192 and 16,384 blocks of 16 tokens: 128k and 256k tokens) without a CPU tier and with 256
# and 1,024 GiB of host memory for KV. Prints one row per run (prefix hit rate split into GPU and
# CPU hits, TTFT p50 and p99, preemptions, bytes loaded from the CPU) and, unless --no-plots, draws
# OUT/kv_offload_mooncake.png. Options: --out DIR (default out/kv_offload_mooncake), --no-plots.
# SIMULATE names the binary, PYTHON the interpreter (default /usr/bin/python3). Six runs, about 1.5 min on
# two shared cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
simulate="${SIMULATE:-$root/build/tools/simulate}"
out=out/kv_offload_mooncake
plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-plots) plots=0; shift ;;
    *) echo "usage: $0 [--out DIR] [--no-plots]" >&2; exit 2 ;;
  esac
done
runs=("8192 0" "8192 256" "8192 1024" "16384 0" "16384 256" "16384 1024")
for run in "${runs[@]}"; do
  set -- $run
  extra=()
  [ "$2" != 0 ] && extra=(--set "kv_offload={cpu_gib: $2}")
  "$simulate" "$experiments/mooncake_prefix.yaml" -q --set replicas.0.count=1 \
    --set router.kind=round_robin --set workload.num_requests=1000 \
    --set workload.trace.time_scale=8 --set "scheduler.num_gpu_blocks=$1" "${extra[@]}" \
    --out "$out/gpu$1_cpu$2" >/dev/null
done
"${PYTHON:-/usr/bin/python3}" - "$out" "$plots" "${runs[@]}" <<'PY'
import json, sys
out, plots, runs = sys.argv[1], sys.argv[2] == "1", [r.split() for r in sys.argv[3:]]
rows = []
print("| GPU KV blocks | CPU tier (GiB) | prefix hit rate | GPU hits | CPU hits | TTFT p50 (ms) | TTFT p99 (ms) | preemptions | loaded from CPU (GB) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for blocks, cpu in runs:
    j = json.load(open(f"{out}/gpu{blocks}_cpu{cpu}/summary.json"))
    p, t = j["prefix_cache"], j["latency_ms"]["ttft"]
    k = j.get("kv_offload", {})
    cpu_hits = k.get("cpu_hit_blocks", 0)
    q = p["query_blocks"]
    row = (int(blocks), int(cpu), p["hit_rate"], (p["hit_blocks"] - cpu_hits) / q, cpu_hits / q,
           t["p50"], t["p99"], j["requests"]["preemptions"], k.get("bytes_from_cpu", 0) / 1e9)
    rows.append(row)
    print(f"| {row[0]:,} | {row[1] if row[1] else '—'} | {row[2]:.1%} | {row[3]:.1%} | {row[4]:.1%} "
          f"| {row[5]:.0f} | {row[6]:.0f} | {row[7]} | {row[8]:.1f} |")
if plots:
    try:
        import matplotlib
    except ImportError:
        sys.exit("no plot: matplotlib is not installed (apt install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r[0] // 1024}k blk, " + (f"CPU {r[1]} GiB" if r[1] else "no CPU") for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    ax[0].bar(x, [r[3] for r in rows], color="tab:blue", label="GPU hits")
    ax[0].bar(x, [r[4] for r in rows], bottom=[r[3] for r in rows], color="tab:orange",
              label="CPU hits")
    ax[0].set_title("prefix hit rate")
    ax[0].legend(fontsize=8)
    ax[1].bar(x, [r[5] for r in rows], color="tab:green")
    ax[1].set_title("TTFT p50 (ms)")
    ax[2].bar(x, [r[6] for r in rows], color="tab:red")
    ax[2].set_title("TTFT p99 (ms)")
    for a in ax:
        a.set_xticks(list(x), labels, rotation=30, ha="right", fontsize=8)
    fig.suptitle("Mooncake conversation trace (first 1,000, 8× slower), 1× H100, Llama-3.1-8B")
    fig.tight_layout()
    fig.savefig(f"{out}/kv_offload_mooncake.png", dpi=120)
    print(f"plot: {out}/kv_offload_mooncake.png")
PY
